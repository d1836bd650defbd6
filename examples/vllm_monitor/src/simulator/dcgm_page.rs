//! The page of a simulated NVIDIA DCGM exporter beside the simulated server: two GPUs whose
//! power follows the requests running, and energy counters that are exactly its integral
//! (energy increase = mean power × time), so joules per token can be checked by hand.

use std::fmt::Write as _;

use promrate::MetricType;

use super::families::family_header;
use super::model::{Simulation, CONCURRENCY, TOKENS_PER_S_PER_REQUEST};
use crate::gpus;

/// The simulated GPUs: `(gpu, UUID)`.
pub const GPUS: [(&str, &str); 2] = [
    ("0", "GPU-5c8e3a1f-9b27-4d6e-a0c3-7f1e2d4b6a89"),
    ("1", "GPU-a2d4f6b8-1c3e-4a5b-9d7f-0e2c4a6b8d13"),
];
pub const GPU_MODEL: &str = "NVIDIA H100 80GB HBM3";
/// Power of one idle GPU.
pub const IDLE_W: f64 = 90.0;
/// Power the requests add across both GPUs when `CONCURRENCY` of them run.
pub const LOADED_W: f64 = 1000.0;
/// Energy the GPUs had used before the simulation, mJ each (about three days).
const ENERGY_BEFORE_MJ: f64 = 9.0e10;

impl Simulation {
    /// Power drawn by all the GPUs `t` seconds in: idle power plus a share proportional to the
    /// requests running.
    pub fn gpu_power_at(&self, t: f64) -> f64 {
        GPUS.len() as f64 * IDLE_W + LOADED_W * self.running_at(t) / CONCURRENCY
    }

    /// Energy all the GPUs used from 0 to `t` seconds in, J: the integral of
    /// [`Simulation::gpu_power_at`] (the running count's integral is the tokens generated
    /// over the decode speed).
    pub fn gpu_energy_until(&self, t: f64) -> f64 {
        let running_integral = self.generated_until(t) / TOKENS_PER_S_PER_REQUEST;
        GPUS.len() as f64 * IDLE_W * t + LOADED_W * running_integral / CONCURRENCY
    }

    /// The DCGM exporter's page `t` seconds into the simulation, in its own form (labels in
    /// its template's order, power as `%f`, energy as whole mJ).
    pub fn render_dcgm_at(&self, t: f64) -> String {
        let share = 1.0 / GPUS.len() as f64;
        let mut page = String::with_capacity(4096);
        let labels = |gpu: &str, uuid: &str| {
            format!(
                "gpu=\"{gpu}\",UUID=\"{uuid}\",pci_bus_id=\"00000000:{gpu}8:00.0\",device=\"nvidia{gpu}\",\
                 modelName=\"{GPU_MODEL}\",Hostname=\"sim-gpu-node\",DCGM_FI_DRIVER_VERSION=\"570.172.08\""
            )
        };
        let mut family = |name: &str, help: &str, kind: MetricType, value: &dyn Fn() -> String| {
            family_header(&mut page, name, help, kind);
            for (gpu, uuid) in GPUS {
                let _ = writeln!(page, "{name}{{{}}} {}", labels(gpu, uuid), value());
            }
        };
        let power = self.gpu_power_at(t) * share;
        let energy_mj = (ENERGY_BEFORE_MJ + self.gpu_energy_until(t) * share * 1000.0).floor();
        let util = (100.0 * self.running_at(t) / CONCURRENCY / 1.25)
            .clamp(0.0, 100.0)
            .round();
        family(gpus::UTIL, "GPU utilization (in %).", MetricType::Gauge, &|| {
            format!("{util}")
        });
        family(gpus::POWER, "Power draw (in W).", MetricType::Gauge, &|| {
            format!("{power:.6}")
        });
        family(
            gpus::ENERGY,
            "Total energy consumption since boot (in mJ).",
            MetricType::Counter,
            &|| format!("{energy_mj}"),
        );
        family(
            gpus::MEMORY_USED,
            "Framebuffer memory used (in MiB).",
            MetricType::Gauge,
            &|| "72960".into(),
        );
        page
    }
}
