import Foundation

/// The command line of `segments-bench`.
struct BenchOptions: Sendable {
    static let usage = """
        usage: segments-bench [--quick] [--json FILE] [--only 1,2,...] [--segments-binary PATH] [--scratch DIR]
               segments-bench --markdown LABEL=FILE [LABEL=FILE ...]
               segments-bench --markdown-results LABEL=FILE [LABEL=FILE ...] [--only 1,2,...]

        Measures the RealtimeSegments SDK; every figure is printed beside a baseline measured in
        the same run, so a busy machine slows both. Build in release mode:
            swift build -c release && swift run -c release segments-bench --json bench.json

          --quick                small counts and shortened timings: a smoke run of about a minute
          --json FILE            also write the figures, the machine and the mode as JSON
          --only LIST            run only these benchmarks (numbers 1-12, comma separated)
          --segments-binary PATH the `segments` executable measured by benchmark 8 (default: the
                                 one beside this executable; build it with `swift build -c release`)
          --scratch DIR          where temporary storage directories go (default: the system
                                 temporary directory; fsync cost depends on its file system)
          --markdown LABEL=FILE  measure nothing: print the figures of earlier --json runs as one
                                 Markdown table, a column group per run (Scripts/performance-doc.sh
                                 puts it into Docs/Performance.md)
          --markdown-results LABEL=FILE
                                 measure nothing: every figure of the runs as one Markdown table,
                                 a row per figure; a later run replaces the benchmarks it measured;
                                 with --only, the rows of these benchmarks alone
          -h, --help             this text

        Benchmarks:
          1  getSegments cache hit through SegmentsClient vs a dictionary read under a lock
          2  one change delivered to 10,000 listeners vs 10,000 plain queue hops
          3  registering and removing 1,000 and 10,000 listeners (10k/1k ratio)
          4  coalescing: 1,000 events over HTTP to the emulator; 10 minutes of events on virtual time
          5  latency from trackEvent to the listener over loopback, debounce 0 (p50, p99)
          6  cold start on 3 x 1,000 stored segments and 10,000 queued events
          7  durable event-queue appends per second at length 10 and 10,000 vs a rewrite-the-file store
          8  peak resident memory of `segments demo` and of benchmark 2
          9  the audience LRU cache alone: a hit, and an insert that evicts, vs a dictionary read under a lock;
             isQualifiedFor (5, 20, 200 qualified segments) vs Optimizely's linear scan of the list
          10 the caller's cost of trackEvent (10 and 10,000 queued), a journal append, configure, listener
             registration and removal, cache-hit reads and customerCookie, each vs a floor
          11 draining 10,000 queued events to the emulator vs the same requests sent directly
        """

    var quick = false
    var jsonPath: String?
    var only: Set<Int>?
    var segmentsBinary: String?
    var scratch = FileManager.default.temporaryDirectory
    var wantsHelp = false
    /// `--markdown`: render these `LABEL=FILE` runs instead of measuring.
    var markdownRuns: [String]?
    /// `--markdown-results`: render these runs as one results table instead of measuring.
    var markdownResults: [String]?
    /// Internal: run one scenario as a child process for benchmark 8 (`fanout`, `idle`,
    /// `load-journal`, `load-customer`, `load-baseline` or `load-client`; the last four load the
    /// store in `--scratch`).
    var child: String?

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(of flag: String) throws -> String {
            guard let next = rest.popFirst(), !next.hasPrefix("--") else {
                throw BenchUsageError(reason: "\(flag) needs a value")
            }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--json": jsonPath = try value(of: argument)
            case "--only":
                let numbers = try value(of: argument).split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !numbers.isEmpty, numbers.allSatisfy({ ($0 ?? 0) >= 1 && ($0 ?? 0) <= 12 }) else {
                    throw BenchUsageError(reason: "--only takes benchmark numbers from 1 to 12, e.g. --only 1,3")
                }
                only = Set(numbers.compactMap { $0 })
            case "--segments-binary": segmentsBinary = try value(of: argument)
            case "--scratch": scratch = URL(fileURLWithPath: try value(of: argument), isDirectory: true)
            case "--child": child = try value(of: argument)
            case "--markdown", "--markdown-results":
                var runs: [String] = []
                while let next = rest.first, !next.hasPrefix("--") {
                    runs.append(next)
                    rest.removeFirst()
                }
                guard !runs.isEmpty else { throw BenchUsageError(reason: "\(argument) needs LABEL=FILE arguments") }
                if argument == "--markdown" { markdownRuns = runs } else { markdownResults = runs }
            case "-h", "--help": wantsHelp = true
            default: throw BenchUsageError(reason: "unknown argument '\(argument)' (try --help)")
            }
        }
    }

    /// Whether benchmark `number` is selected.
    func runs(_ number: Int) -> Bool {
        only?.contains(number) ?? true
    }

    /// `full` in a normal run, `quick` in a smoke run.
    func pick<Value>(full: Value, quick: Value) -> Value {
        self.quick ? quick : full
    }
}

/// A bad command line.
struct BenchUsageError: Error {
    let reason: String
}
