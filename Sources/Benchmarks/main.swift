// segments-bench: the performance figures of Docs/Performance.md. See `segments-bench --help`.
import Foundation

if CommandLine.arguments.dropFirst().first == "stack-probe" {
    exit(StackProbe.run(Array(CommandLine.arguments.dropFirst(2))))
}

do {
    let options = try BenchOptions(Array(CommandLine.arguments.dropFirst()))
    if options.wantsHelp {
        print(BenchOptions.usage)
    } else if let runs = options.markdownRuns {
        print(try MarkdownTable.render(runs))
    } else if let runs = options.markdownResults {
        print(try MarkdownTable.renderResults(runs, only: options.only))
    } else if let child = options.child {
        try await MemoryBenchmark.runChild(child, quick: options.quick, folder: options.scratch)
    } else {
        try await BenchRunner(options: options).run()
    }
} catch let error as BenchUsageError {
    FileHandle.standardError.write(Data("segments-bench: \(error.reason)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("segments-bench: \(error)\n".utf8))
    exit(1)
}
