import Foundation

/// `segments-bench --markdown LABEL=FILE …`: the figures of committed `--json` runs as one Markdown
/// table, so the figures in `Docs/Performance.md` are generated from those files
/// (`Scripts/performance-doc.sh`), never typed by hand.
///
/// One row per figure id (in the order they first appear); for each run its measured value, its
/// same-run floor and the ratio; then the target when the figure records one (`details.target`, ns).
/// Below the table, one line per run: file, date, mode and load average.
enum MarkdownTable {
    struct Run {
        let label: String
        let path: String
        let report: Report
    }

    static func render(_ arguments: [String]) throws -> String {
        let runs = try arguments.map { argument -> Run in
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw BenchUsageError(reason: "--markdown takes LABEL=FILE arguments, e.g. before=Docs/a.json")
            }
            let path = String(argument[argument.index(after: equals)...])
            let decoder = JSONDecoder()
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            let report = try decoder.decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            return Run(label: String(argument[..<equals]), path: path, report: report)
        }
        guard !runs.isEmpty else { throw BenchUsageError(reason: "--markdown needs at least one LABEL=FILE") }

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
        for run in runs {
            let machine = run.report.machine
            let load = [machine.loadAverageAtStart, machine.loadAverageAtEnd].map { $0.map { Format.fixed($0, 2) } ?? "?" }
            lines.append(
                "- \(run.label): [`\((run.path as NSString).lastPathComponent)`](\((run.path as NSString).lastPathComponent)), "
                    + "\(run.report.startedAt), \(run.report.mode) run, \(machine.build), \(machine.logicalCPUs) CPUs, "
                    + "1-minute load \(load[0]) → \(load[1])")
        }
        return lines.joined(separator: "\n")
    }

    private static func row(_ cells: [String]) -> String {
        "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
    }
}
