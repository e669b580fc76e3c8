import Foundation

/// `segments-bench --markdown LABEL=FILE …`: the figures of committed `--json` runs as one Markdown
/// table, so the figures in `Docs/Performance.md` are generated from those files
/// (`Scripts/performance-doc.sh`), never typed by hand.
///
/// One row per figure id (in the order they first appear); for each run its measured value, its
/// same-run floor and the ratio; then the target when the figure records one (`details.target`, ns).
/// In the results table, a figure that loads a stored file also shows its excess per byte of the
/// file (`details.excessPerFileByte`).
/// Below the table, one line per run: file, date, mode and load average.
enum MarkdownTable {
    struct Run {
        let label: String
        let path: String
        let report: Report
    }

    static func runs(_ arguments: [String], option: String) throws -> [Run] {
        let runs = try arguments.map { argument -> Run in
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw BenchUsageError(reason: "\(option) takes LABEL=FILE arguments, e.g. before=Docs/a.json")
            }
            let path = String(argument[argument.index(after: equals)...])
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            let report = try decoder.decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            return Run(label: String(argument[..<equals]), path: path, report: report)
        }
        guard !runs.isEmpty else { throw BenchUsageError(reason: "\(option) needs at least one LABEL=FILE") }
        return runs
    }

    /// `--markdown`: one column group per run, one row per figure id.
    static func render(_ arguments: [String]) throws -> String {
        let runs = try runs(arguments, option: "--markdown")

        var ids: [String] = []
        for run in runs { for figure in run.report.figures where !ids.contains(figure.id) { ids.append(figure.id) } }
        var header = ["#", "figure (median)"]
        for run in runs { header += ["\(run.label): measured", "floor, same run", "ratio"] }
        header.append("target")
        var lines = [row(header), row(header.map { _ in "---" })]
        for id in ids {
            let figures = runs.map { run in run.report.figures.first { $0.id == id } }
            guard let first = figures.compactMap({ $0 }).first else { continue }
            var cells = [id, first.title]
            for figure in figures {
                guard let figure else {
                    cells += ["—", "—", "—"]
                    continue
                }
                cells += [
                    figure.display, figure.baselineDisplay.map { "\($0): \(figure.baselineTitle ?? "")" } ?? "—",
                    figure.ratio.map(Format.ratio) ?? "—",
                ]
            }
            let target = figures.compactMap { $0?.details["target"] }.first
            cells.append(target.map { "≤ \(Format.duration(ns: $0))" } ?? "—")
            lines.append(row(cells))
        }
        lines.append("")
        lines += runLines(runs)
        return lines.joined(separator: "\n")
    }

    /// `--markdown-results LABEL=FILE …`: every figure of the runs as one table, one row per
    /// figure. A later run replaces the whole benchmarks it measured (all rows whose id starts with
    /// the same number), so a re-run of one benchmark (`--only 2`) is listed after the full run it
    /// updates. Rows are ordered by benchmark number, then as in their run; the last column names
    /// the run each row comes from. A figure added to the benchmarks appears with the next run,
    /// without any change here. With `only`, the rows of those benchmarks alone (a document can
    /// show one run in several tables).
    static func renderResults(_ arguments: [String], only: Set<Int>? = nil) throws -> String {
        let runs = try runs(arguments, option: "--markdown-results")
        var rows: [(benchmark: Int, run: Run, figure: Figure)] = []
        for run in runs {
            let measured = Set(run.report.figures.map { benchmark(of: $0.id) })
            rows.removeAll { measured.contains($0.benchmark) }
            rows += run.report.figures.map { (benchmark(of: $0.id), run, $0) }
        }
        if let only { rows.removeAll { !only.contains($0.benchmark) } }
        // A stable sort: equal benchmarks keep their run's order.
        let ordered = rows.enumerated().sorted { ($0.element.benchmark, $0.offset) < ($1.element.benchmark, $1.offset) }
        let header = ["#", "figure (median unless stated)", "measured", "baseline, same run", "ratio", "run"]
        var lines = [row(header), row(header.map { _ in "---" })]
        for (_, entry) in ordered {
            let figure = entry.figure
            lines.append(
                row([
                    figure.id, figure.title, figure.display,
                    figure.baselineDisplay.map { display in
                        figure.baselineTitle.map { "\(display): \($0)" } ?? display
                    } ?? "—",
                    ratioCell(figure), entry.run.label,
                ]))
        }
        lines.append("")
        lines += runLines(runs)
        return lines.joined(separator: "\n")
    }

    /// The ratio to the baseline; for a figure that loads a file (`details.excessPerFileByte`), also
    /// what the load added above the idle process per byte of the file, the figure Behaviour P7
    /// bounds (a valid queue at most 4×).
    private static func ratioCell(_ figure: Figure) -> String {
        let ratio = figure.ratio.map(Format.ratio) ?? "—"
        guard let perByte = figure.details["excessPerFileByte"] else { return ratio }
        return "\(ratio); the load: \(Format.ratio(perByte)) the file's bytes"
    }

    /// The benchmark number an id starts with (`3a` → 3); ids without one sort last.
    private static func benchmark(of id: String) -> Int {
        Int(id.prefix { $0.isNumber }) ?? Int.max
    }

    /// One line per run: file, date, mode and load average.
    private static func runLines(_ runs: [Run]) -> [String] {
        var lines: [String] = []
        for run in runs {
            let machine = run.report.machine
            let load = [machine.loadAverageAtStart, machine.loadAverageAtEnd].map { $0.map { Format.fixed($0, 2) } ?? "?" }
            lines.append(
                "- \(run.label): [`\((run.path as NSString).lastPathComponent)`](\((run.path as NSString).lastPathComponent)), "
                    + "\(run.report.startedAt), \(run.report.mode) run, \(machine.build), \(machine.logicalCPUs) CPUs, "
                    + "1-minute load \(load[0]) → \(load[1])")
        }
        return lines
    }

    private static func row(_ cells: [String]) -> String {
        "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
    }
}
