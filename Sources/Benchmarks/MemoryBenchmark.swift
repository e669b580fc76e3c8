import Foundation
import SegmentsDomain
import RealtimeSegments

/// Benchmark 8: peak resident memory of `segments demo`, of benchmark 2 (10,000 listeners and
/// their deliveries) and of loading stored files (MemoryBenchmark+StoredFiles.swift), each in a
/// child process of its own, against the same executables doing nothing (`segments --help`,
/// `segments-bench --child idle`).
struct MemoryBenchmark {
    let options: BenchOptions

    func run() async throws -> [Figure] {
        // /proc/self/exe names this very binary on Linux; argv[0] elsewhere.
        let ownPath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
        let ownExecutable = URL(fileURLWithPath: ownPath)
        let segments = options.segmentsBinary.map { URL(fileURLWithPath: $0) }
            ?? ownExecutable.deletingLastPathComponent().appendingPathComponent("segments")
        var figures: [Figure] = []

        if FileManager.default.isExecutableFile(atPath: segments.path) {
            let idle = try PeakMemory.run(segments, ["--help"])
            let demo = try PeakMemory.run(segments, ["demo"])
            figures.append(figure(id: "8a", title: "peak RSS of `segments demo`", run: demo, idle: idle, idleTitle: "`segments --help`"))
        } else {
            var missing = Figure(id: "8a", title: "peak RSS of `segments demo`", value: .nan, unit: "KiB", display: "not measured")
            missing.notes.append("no executable at \(segments.path): run `swift build -c release` (all products) first, or pass --segments-binary")
            figures.append(missing)
        }

        let idle = try PeakMemory.run(ownExecutable, ["--child", "idle"])
        let fanout = try PeakMemory.run(ownExecutable, ["--child", "fanout"] + (options.quick ? ["--quick"] : []))
        figures.append(
            figure(id: "8b", title: "peak RSS of benchmark 2 (10,000 listeners)", run: fanout, idle: idle, idleTitle: "`segments-bench --child idle`"))
        figures += try storedFileFigures(ownExecutable: ownExecutable, idle: idle)
        return figures
    }

    func figure(id: String, title: String, run: PeakMemory.ChildRun, idle: PeakMemory.ChildRun, idleTitle: String) -> Figure {
        let value = run.peakKiB ?? .nan
        let base = idle.peakKiB ?? .nan
        var figure = Figure(
            id: id, title: title, value: value, unit: "KiB", display: Format.memory(kib: value),
            baseline: ("same binary, \(idleTitle)", base, Format.memory(kib: base)))
        figure.details = ["deltaKiB": value - base, "seconds": run.seconds, "exitStatus": Double(run.exitStatus)]
        figure.notes.append("measured with \(run.method); \(Format.memory(kib: value - base)) above the idle process; ran \(Format.fixed(run.seconds, 1)) s")
        if run.exitStatus != 0 { figure.notes.append("the child exited with status \(run.exitStatus)") }
        return figure
    }

    /// The body of `segments-bench --child NAME`: `idle` returns at once, `fanout` runs
    /// benchmark 2's scenario once, `load-journal`, `load-customer`, `load-baseline` and
    /// `load-client` load the store in `folder` (the last through a configured client).
    static func runChild(_ name: String, quick: Bool, folder: URL) async throws {
        switch name {
        case "load-journal", "load-customer", "load-baseline", "load-client":
            try await loadStoredFile(name, in: folder)
        case "idle":
            return
        case "fanout":
            _ = try await FanOutBenchmark.measure(
                listeners: FanOutBenchmark.listeners, rounds: quick ? 1 : 3, logger: Fixtures.logger())
        default:
            throw BenchUsageError(reason: "unknown child scenario '\(name)'")
        }
    }
}
