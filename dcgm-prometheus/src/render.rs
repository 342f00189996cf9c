//! The [`Renderer`]'s text entry points: each builds the collection's model once
//! ([`Renderer::build`]) and writes it with the text encoder ([`write_text`](crate::write_text)).

use std::fmt;
use std::io;

use dcgm_reader::Snapshot;

use crate::events::EventWindow;
use crate::exposition::Exposition;
use crate::renderer::Renderer;

impl Renderer {
    /// Writes the exposition of `snap` into `out` (cleared first). `windows` feed the
    /// `DCGM_EXP_XID_ERRORS_COUNT` / `DCGM_EXP_CLOCK_EVENTS_COUNT` rows; a windowed row
    /// without its window is left out.
    pub fn render(&mut self, snap: &Snapshot, windows: &[EventWindow], out: &mut String) {
        self.render_snapshots(&[snap], windows, out);
    }

    /// Like [`Renderer::render`], with the values spread over several snapshots (one per
    /// reader): an entity's values are taken from the first snapshot that has the entity.
    pub fn render_snapshots(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        out: &mut String,
    ) {
        out.clear();
        let mut exp = std::mem::take(&mut self.exposition);
        self.build(snaps, windows, &mut exp);
        self.text.encode(&exp, out);
        self.exposition = exp;
    }

    /// Appends the exposition of `snaps` to any [`fmt::Write`] (a `String`, a formatter),
    /// family by family.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn render_to<W: fmt::Write + ?Sized>(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        out: &mut W,
    ) -> fmt::Result {
        let mut exp = std::mem::take(&mut self.exposition);
        self.build(snaps, windows, &mut exp);
        let written = self.text.write(&exp, out);
        self.exposition = exp;
        written
    }

    /// Appends the exposition of `snaps` to any [`io::Write`] (a file, a socket, standard
    /// output), as [`Renderer::render_to`] does.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn render_io<W: io::Write + ?Sized>(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        out: &mut W,
    ) -> io::Result<()> {
        let mut exp = std::mem::take(&mut self.exposition);
        self.build(snaps, windows, &mut exp);
        let written = self.text.write_io(&exp, out);
        self.exposition = exp;
        written
    }

    /// Like [`Renderer::render_snapshots`], and keeps the model the text was written from in
    /// `structured` (for other encodings: OTLP): the same families in the same order, and in
    /// each the same series with the same labels (unescaped) and values.
    /// `dcgm_exporter_simulated` is [`Exposition::simulated`] rather than a family.
    pub fn render_structured(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        out: &mut String,
        structured: &mut Exposition,
    ) {
        out.clear();
        self.build(snaps, windows, structured);
        self.text.encode(structured, out);
    }
}
