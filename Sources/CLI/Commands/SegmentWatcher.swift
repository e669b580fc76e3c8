import Foundation
import SegmentsDomain
import RealtimeSegments

/// Remembers the latest list of each category and prints every change as it arrives.
final class SegmentWatcher: Sendable {
    private let start: Date
    private let latest = Locked<[SegmentCategory: [Segment]]>([:])

    init(start: Date) {
        self.start = start
    }

    /// A listener's handler: records and prints the change with its time since the start.
    func changed(_ category: SegmentCategory, _ segments: [Segment]) {
        latest.withLock { $0[category] = segments }
        let names = segments.map { $0.attributes["name"] ?? $0.id }.sorted()
        let elapsed = String(format: "%6.2fs", Date().timeIntervalSince(start))
        print("  [\(elapsed)] \(category.name.padding(toLength: 13, withPad: " ", startingAt: 0)) → \(names.isEmpty ? "(none)" : names.joined(separator: ", "))")
    }

    /// The latest list of `category`, if it was told any.
    func segments(in category: SegmentCategory) -> [Segment]? {
        latest.withLock { $0[category] }
    }

    /// Waits until `condition` holds for the latest lists, or `timeout` seconds pass.
    /// - Returns: whether the condition held.
    func wait(timeout: TimeInterval, until condition: @escaping @Sendable ([SegmentCategory: [Segment]]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if latest.withLock({ condition($0) }) { return true }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        return latest.withLock { condition($0) }
    }
}
