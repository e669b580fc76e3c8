import Foundation
import SegmentsDomain
import RealtimeSegments

/// A storage directory written by the SDK's own File stores — a customer, a baseline of three
/// categories and a queue of events — that benchmarks 6 and 7 copy before each use.
struct StorageTemplate: Sendable {
    static let categories: [SegmentCategory] = [.discovery(), .merchandising(), .content()]

    let directory: ScratchDirectory
    let customer: CustomerIds
    let segmentsPerCategory: Int
    let queuedEvents: Int
    /// Nanoseconds the durable appends of the queue took while preparing (one `fsync` each).
    let appendNs: UInt64

    /// Writes the template: `segmentsPerCategory` segments in each of three categories, fetched
    /// now on the system clock, and `queuedEvents` events appended one by one.
    static func prepare(in scratch: URL, segmentsPerCategory: Int, queuedEvents: Int) throws -> StorageTemplate {
        let directory = try Fixtures.directory(in: scratch, "template")
        let logger = Fixtures.logger()
        let customer = CustomerIds(cookie: "cold-start-cookie")
        try FileCustomerStore(directory: directory.url, logger: logger).save(customer)
        var segments: SegmentsByCategory = [:]
        for category in categories {
            segments[category] = Fixtures.segments(segmentsPerCategory, prefix: category.name)
        }
        try FileSegmentBaselineStore(directory: directory.url, logger: logger).save(
            SegmentBaseline(snapshot: SegmentSnapshot(customer: customer, segments: segments, fetchedAt: Date())))
        let queue = FileEventQueueStore(directory: directory.url, logger: logger)
        _ = queue.load()
        let appendNs = try Stopwatch.time {
            for index in 0..<queuedEvents { try queue.append(Fixtures.event(index, customer: customer)) }
        }
        guard logger.entries.isEmpty else {
            throw BenchFailure("preparing the storage template logged: \(logger.messages.joined(separator: "; "))")
        }
        return StorageTemplate(
            directory: directory, customer: customer, segmentsPerCategory: segmentsPerCategory, queuedEvents: queuedEvents,
            appendNs: appendNs)
    }

    /// A fresh copy of the template under `scratch`.
    func copy(in scratch: URL, _ name: String) throws -> ScratchDirectory {
        let target = scratch.appendingPathComponent("segments-bench-\(name)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.copyItem(at: directory.url, to: target)
        return ScratchDirectory(url: target)
    }

    /// The stored files, for the floor that only reads them.
    var fileURLs: [URL] {
        ((try? FileManager.default.contentsOfDirectory(at: directory.url, includingPropertiesForKeys: nil)) ?? [])
            .sorted { $0.path < $1.path }
    }
}
