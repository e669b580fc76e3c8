import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Peak resident memory ("high-water mark") of this process and of child processes.
enum PeakMemory {
    /// This process's peak resident set in KiB: `VmHWM` of /proc/self/status on Linux, otherwise
    /// `getrusage` (`ru_maxrss` is KiB on Linux, bytes on Apple platforms).
    static func ofThisProcess() -> Double? {
        if let kib = highWaterMark(statusPath: "/proc/self/status") { return kib }
        var usage = rusage()
        #if canImport(Glibc)
            let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
            let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return nil }
        #if canImport(Darwin)
            return Double(usage.ru_maxrss) / 1024
        #else
            return Double(usage.ru_maxrss)
        #endif
    }

    /// `VmHWM` of a /proc status file, in KiB.
    static func highWaterMark(statusPath: String) -> Double? {
        guard let text = try? String(contentsOfFile: statusPath, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.split(separator: " ").compactMap { Double($0) }
            return digits.first
        }
        return nil
    }

    /// The outcome of running a child process to the end.
    struct ChildRun: Sendable {
        /// Peak resident set in KiB, when it could be read.
        var peakKiB: Double?
        /// How the peak was read.
        var method: String
        var exitStatus: Int32
        var seconds: Double
    }

    /// Child processes need `Process`, which exists only on macOS and Linux.
    struct NoChildProcesses: Error, CustomStringConvertible {
        var description: String { "this platform cannot start child processes (Foundation's Process is macOS and Linux only)" }
    }

    #if !(os(macOS) || os(Linux))
    /// Where `Process` does not exist (iOS, tvOS, watchOS): benchmark 8 cannot run.
    static func run(_ executable: URL, _ arguments: [String]) throws -> ChildRun {
        throw NoChildProcesses()
    }
    #else
    /// Runs `executable` with `arguments` to its end (standard output discarded) and reads its peak
    /// resident set: from `/usr/bin/time -v` when present (exact: the kernel's rusage of the
    /// reaped child), else by polling `/proc/<pid>/status` every 2 ms (may miss a final spike).
    static func run(_ executable: URL, _ arguments: [String]) throws -> ChildRun {
        let time = URL(fileURLWithPath: "/usr/bin/time")
        let useTime = FileManager.default.isExecutableFile(atPath: time.path)
        let process = Process()
        process.executableURL = useTime ? time : executable
        process.arguments = useTime ? ["-v", executable.path] + arguments : arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        // /usr/bin/time reports on standard error; a polled child's is not needed.
        process.standardError = useTime ? errors : FileHandle.nullDevice
        let start = Stopwatch.now()
        try process.run()
        var polled: Double?
        if !useTime {
            let status = "/proc/\(process.processIdentifier)/status"
            while process.isRunning {
                if let kib = highWaterMark(statusPath: status) { polled = Swift.max(polled ?? 0, kib) }
                usleep(2000)
            }
        }
        let stderr = useTime ? errors.fileHandleForReading.readDataToEndOfFile() : Data()
        process.waitUntilExit()
        let seconds = Double(Stopwatch.now() - start) / 1e9
        guard useTime else {
            return ChildRun(peakKiB: polled, method: "polled /proc/<pid>/status VmHWM", exitStatus: process.terminationStatus, seconds: seconds)
        }
        let text = String(decoding: stderr, as: UTF8.self)
        let peak = text.split(separator: "\n")
            .first { $0.contains("Maximum resident set size") }
            .flatMap { $0.split(separator: ":").last }
            .flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        return ChildRun(peakKiB: peak, method: "/usr/bin/time -v", exitStatus: process.terminationStatus, seconds: seconds)
    }
    #endif
}
