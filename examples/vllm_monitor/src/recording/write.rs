//! Writing a recording (`--record FILE`): [`Writer`], plain or compressed by the file's name.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::Value;

use super::{header_to_json, to_json, Header, Recorded, BUFFER};

/// zstd's default level: about gzip's size at several times its speed.
const ZSTD_LEVEL: i32 = 3;

/// Writes a recording as the run goes: one line per scrape, each on the file as soon as it
/// is written, so that whatever stops the run, what was recorded until then can be read.
pub struct Writer {
    /// None once finished, so that Drop knows whether it has work left.
    sink: Option<Sink>,
    /// One line's text, kept between writes so that a page's size is allocated once.
    line: Vec<u8>,
    /// After a failed write the file may end in part of a line, which the next line would
    /// join and spoil: later writes fail too instead.
    failed: bool,
}

enum Sink {
    Plain(BufWriter<File>),
    Gzip(GzEncoder<BufWriter<File>>),
    Zstd(zstd::Encoder<'static, BufWriter<File>>),
}

impl Sink {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Sink::Plain(file) => file,
            Sink::Gzip(encoder) => encoder,
            Sink::Zstd(encoder) => encoder,
        }
    }

    /// Ends the compressed stream, so that a reader knows the recording is whole.
    fn finish(self) -> io::Result<()> {
        let mut file = match self {
            Sink::Plain(file) => file,
            Sink::Gzip(encoder) => encoder.finish()?,
            Sink::Zstd(encoder) => encoder.finish()?,
        };
        file.flush()
    }
}

impl Writer {
    /// Creates (or empties) `path` and writes the header. `.gz` and `.zst` names are
    /// compressed, as the `recording` module's documentation says.
    pub fn create(path: &Path, header: &Header) -> io::Result<Writer> {
        let file = BufWriter::with_capacity(BUFFER, File::create(path)?);
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let sink = if extension.eq_ignore_ascii_case("gz") {
            Sink::Gzip(GzEncoder::new(file, Compression::default()))
        } else if extension.eq_ignore_ascii_case("zst") {
            let mut encoder = zstd::Encoder::new(file, ZSTD_LEVEL)?;
            // A damaged file is then told from a good one by the reader.
            encoder.include_checksum(true)?;
            Sink::Zstd(encoder)
        } else {
            Sink::Plain(file)
        };
        let mut writer = Writer {
            sink: Some(sink),
            line: Vec::new(),
            failed: false,
        };
        writer.write_line(&header_to_json(header))?;
        Ok(writer)
    }

    /// Writes one scrape's line and flushes it through to the file (not to the disk).
    pub fn write(&mut self, scrape: &Recorded) -> io::Result<()> {
        self.write_line(&to_json(scrape))
    }

    /// Ends the recording, of a run that computed `ticks` intervals if known: a last line
    /// `{"end_of_run": true, "ticks": N}` (a replay computes as many, [`super::Replay::ticks`]),
    /// and a compressed file is left with its proper end (a reader will not call it
    /// truncated). Dropping the writer ends the stream without that line, and cannot report
    /// a failure.
    pub fn finish(mut self, ticks: Option<u64>) -> io::Result<()> {
        if let Some(ticks) = ticks {
            self.write_line(&serde_json::json!({ "end_of_run": true, "ticks": ticks }))?;
        }
        match self.sink.take() {
            Some(sink) => sink.finish(),
            None => Ok(()),
        }
    }

    fn write_line(&mut self, value: &Value) -> io::Result<()> {
        if self.failed {
            return Err(io::Error::other("an earlier write to the recording failed"));
        }
        let Some(sink) = self.sink.as_mut() else {
            return Err(io::Error::other("the recording is finished"));
        };
        self.line.clear();
        serde_json::to_writer(&mut self.line, value)?;
        self.line.push(b'\n');
        let writer = sink.writer();
        let written = writer.write_all(&self.line).and_then(|()| writer.flush());
        self.failed = written.is_err();
        written
    }
}

impl Drop for Writer {
    /// Best effort: a run that ends by an error or a panic still leaves a whole file.
    fn drop(&mut self) {
        if let Some(sink) = self.sink.take() {
            let _ = sink.finish();
        }
    }
}
