import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// Test data and small doubles shared by the benchmarks.
enum Fixtures {
    /// A logger that keeps warnings and errors in memory, so a benchmark can report them without
    /// printing into the table.
    static func logger() -> RecordingLogger {
        RecordingLogger(level: .warning)
    }

    /// `count` distinct segments named `<prefix>-<n>`.
    static func segments(_ count: Int, prefix: String) -> [Segment] {
        (0..<count).map { index in
            Segment(id: "\(prefix)-\(index)", segmentationId: "segmentation-\(index % 7)", attributes: ["name": "Segment \(index)"])
        }
    }

    /// An event as an app would track it.
    static func event(_ index: Int, customer: CustomerIds, at timestamp: Date = Date()) -> TrackedEvent {
        TrackedEvent(
            kind: .event(type: "view_item"), customerIds: customer,
            properties: ["sku": .string("SKU-\(index)"), "price": 19.99, "quantity": 1, "category": "shoes"],
            timestamp: timestamp)
    }

    /// A new, empty directory under `scratch`, removed by ``ScratchDirectory/remove()``.
    static func directory(in scratch: URL, _ name: String) throws -> ScratchDirectory {
        let url = scratch.appendingPathComponent("segments-bench-\(name)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return ScratchDirectory(url: url)
    }

    /// Warnings and errors a logger captured, as report notes.
    static func notes(from logger: RecordingLogger, limit: Int = 3) -> [String] {
        let entries = logger.entries
        guard !entries.isEmpty else { return [] }
        var notes = entries.prefix(limit).map { "logged \($0.level): \($0.message)" }
        if entries.count > limit { notes.append("… and \(entries.count - limit) more warnings/errors") }
        return notes
    }
}

/// A temporary directory owned by one benchmark.
struct ScratchDirectory: Sendable {
    let url: URL

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A repository that answers like ``RecordingSegmentRepository`` and stamps the moment each answer
/// is handed back to the engine: the start of "applying a fetch result".
final class StampingRepository: SegmentRepository {
    let recording = RecordingSegmentRepository()
    private let lastAnswerAt = Locked<UInt64>(0)

    /// When the latest fetch returned.
    var answeredAt: UInt64 { lastAnswerAt.value }

    func fetchSegments(for customer: CustomerIds) async throws -> SegmentsByCategory {
        let answer = try await recording.fetchSegments(for: customer)
        lastAnswerAt.withLock { $0 = Stopwatch.now() }
        return answer
    }

    func linkCustomerIds(_ customer: CustomerIds) async throws {
        try await recording.linkCustomerIds(customer)
    }
}
