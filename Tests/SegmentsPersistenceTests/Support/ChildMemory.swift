// Peak memory of one load, measured in a child process. `Process` and /proc/self exist together only
// on Linux here; on Apple platforms the tests that use this record why they did not measure
// (benchmark 8 measures there).
#if os(Linux)

import Foundation
import Glibc
import Testing

/// Measures the peak resident memory a piece of work adds, in a process of its own: this test
/// binary run again with a filter naming one test, and `SEGMENTS_MEMORY_CHILD` naming a folder. The
/// test sees the variable and, instead of its assertions, runs the work and writes the figure into
/// the folder. A process of its own, because the tests of a `swift test` run share one process: its
/// peak is everyone's.
///
/// In the child the kernel's peak (`VmHWM`) is reset (`/proc/self/clear_refs`, 5) right before the
/// work, so the figure is the peak during the work less the resident size before it: what the work
/// added, whatever the test runner's start-up took.
enum ChildMemory {
    static let variable = "SEGMENTS_MEMORY_CHILD"
    private static let resultName = "measured-peak-bytes"

    /// Whether this process runs under AddressSanitizer or ThreadSanitizer (their runtimes define
    /// these symbols), whose own memory would count in every peak.
    static let underSanitizer: Bool = ["__asan_init", "__tsan_init"].contains { (name: String) in dlsym(nil, name) != nil }

    /// In the child: the folder named by the parent; `nil` in the parent.
    static var childFolder: URL? {
        ProcessInfo.processInfo.environment[variable].map { URL(fileURLWithPath: $0, isDirectory: true) }
    }

    /// In the child: runs `body` and writes the peak it added, in bytes, into `folder`.
    static func measure<Result>(in folder: URL, _ body: () throws -> Result) throws {
        let before = try #require(status("VmRSS"))
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let result = try body()
        let peak = try #require(status("VmHWM"))
        withExtendedLifetime(result) {}
        try String((peak - before) * 1024).write(
            to: folder.appendingPathComponent(resultName), atomically: true, encoding: .utf8)
    }

    /// In the parent: runs the test named `test` (the function's name, unique in the binary) in a
    /// child on `folder`, waits for it (at most `seconds`), and returns the peak its work added, in bytes.
    static func peakBytes(ofTest test: String, folder: URL, seconds: Double = 120) throws -> Int {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--testing-library", "swift-testing", "--filter", test]
        var environment = ProcessInfo.processInfo.environment
        environment[variable] = folder.path
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        if ended.wait(timeout: .now() + seconds) == .timedOut {
            process.terminate()
            _ = ended.wait(timeout: .now() + 10)
            throw ChildTimedOut(test: test)
        }
        let text = try String(contentsOf: folder.appendingPathComponent(resultName), encoding: .utf8)
        return try #require(Int(text), "the child wrote \(text)")
    }

    /// A field of /proc/self/status, in KiB.
    private static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return line.split(separator: " ").compactMap { Int($0) }.first
        }
        return nil
    }

    struct ChildTimedOut: Error {
        let test: String
    }
}

#endif
