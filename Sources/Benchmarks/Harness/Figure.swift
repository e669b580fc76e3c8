import Foundation

/// One row of the report: a measured value, the baseline measured beside it in the same run, and
/// their ratio.
struct Figure: Codable, Sendable {
    /// The benchmark number and row letter, e.g. `3a`.
    var id: String
    /// What was measured, in a few words.
    var title: String
    /// The measured value in `unit`.
    var value: Double
    /// `ns`, `ms`, `count`, `per_second`, `KiB`, …
    var unit: String
    /// The value as printed in the table.
    var display: String
    /// What the baseline is, when there is one.
    var baselineTitle: String?
    /// The baseline in the same unit.
    var baselineValue: Double?
    /// The baseline as printed.
    var baselineDisplay: String?
    /// `value / baselineValue` unless stated otherwise in `ratioMeaning`.
    var ratio: Double?
    /// How to read the ratio.
    var ratioMeaning: String?
    /// Extra numbers (sample counts, percentiles, spreads).
    var details: [String: Double] = [:]
    /// Caveats: shortened timings, failures, anything a reader must know.
    var notes: [String] = []

    init(
        id: String, title: String, value: Double, unit: String, display: String,
        baseline: (title: String, value: Double, display: String)? = nil,
        ratio: Double? = nil, ratioMeaning: String? = nil
    ) {
        self.id = id
        self.title = title
        self.value = value
        self.unit = unit
        self.display = display
        self.baselineTitle = baseline?.title
        self.baselineValue = baseline?.value
        self.baselineDisplay = baseline?.display
        self.ratio = ratio ?? baseline.flatMap { $0.value > 0 ? value / $0.value : nil }
        self.ratioMeaning = ratioMeaning
    }
}

/// Everything one run produced.
struct Report: Codable, Sendable {
    var tool = "segments-bench"
    var mode: String
    var startedAt: String
    var machine: Machine
    var figures: [Figure] = []
    var durationSeconds: Double = 0

    /// The figures as a fixed-width text table, then the notes.
    func table() -> String {
        let header = ["#", "figure", "measured", "baseline (same run)", "ratio"]
        let rows = figures.map { figure in
            [
                figure.id, figure.title, figure.display,
                figure.baselineTitle.map { "\(figure.baselineDisplay ?? "") \($0)" } ?? "—",
                figure.ratio.map(Format.ratio) ?? "—",
            ]
        }
        let widths = header.indices.map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        var lines = [line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
        lines += rows.map(line)
        let notes = figures.flatMap { figure in
            (figure.ratioMeaning.map { ["ratio: \($0)"] } ?? []).map { "\(figure.id) \($0)" }
                + figure.notes.map { "\(figure.id) \($0)" }
        }
        if !notes.isEmpty {
            lines.append("")
            lines += notes
        }
        return lines.joined(separator: "\n")
    }

    /// The report as pretty-printed JSON.
    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // A figure that could not be measured is NaN; JSON has no number for it.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try encoder.encode(self)
    }
}
