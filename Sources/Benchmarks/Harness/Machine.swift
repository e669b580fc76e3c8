import Foundation

/// The machine a run happened on, so figures from different runs are not compared blindly.
struct Machine: Codable, Sendable {
    var cpuModel: String
    var logicalCPUs: Int
    var memoryGiB: Double
    var operatingSystem: String
    var compiler: String
    var build: String
    /// The 1-minute load average when the run started and ended (other work on a shared machine).
    var loadAverageAtStart: Double?
    var loadAverageAtEnd: Double?
    /// The file system of the scratch directory (fsync cost depends on it).
    var scratchDirectory: String

    static func current(scratch: URL) -> Machine {
        Machine(
            cpuModel: cpuModel(), logicalCPUs: ProcessInfo.processInfo.activeProcessorCount,
            memoryGiB: Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824,
            operatingSystem: ProcessInfo.processInfo.operatingSystemVersionString, compiler: compiler,
            build: build, loadAverageAtStart: loadAverage(), loadAverageAtEnd: nil, scratchDirectory: scratch.path)
    }

    /// The first `model name` of /proc/cpuinfo (Linux), else the machine's architecture.
    private static func cpuModel() -> String {
        if let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let colon = line.firstIndex(of: ":")
        {
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        #if arch(x86_64)
            return "x86_64"
        #elseif arch(arm64)
            return "arm64"
        #else
            return "unknown"
        #endif
    }

    /// The 1-minute load average from /proc/loadavg, when there is one.
    static func loadAverage() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        return text.split(separator: " ").first.flatMap { Double($0) }
    }

    private static var compiler: String {
        #if compiler(>=6.3)
            return "Swift 6.3 or later"
        #elseif compiler(>=6.2)
            return "Swift 6.2"
        #else
            return "Swift 6.0–6.1"
        #endif
    }

    private static var build: String {
        #if DEBUG
            return "debug (numbers are not representative: use -c release)"
        #else
            return "release"
        #endif
    }
}
