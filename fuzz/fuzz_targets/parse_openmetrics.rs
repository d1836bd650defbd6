//! Any bytes through the OpenMetrics parser (see `common::check_page`).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::check_page(data, promrate::Format::OpenMetrics));
