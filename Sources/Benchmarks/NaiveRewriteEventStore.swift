import Foundation
import SegmentsDomain
import RealtimeSegments

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The baseline of benchmark 7: an event queue that encodes the whole array as JSON and replaces
/// its file atomically on every change (write a temporary file, `fsync` it, rename it over the
/// old one), as durable as ``FileEventQueueStore`` but with no journal.
final class NaiveRewriteEventStore: EventQueueStore {
    private let file: URL
    private let events: Locked<[TrackedEvent]>

    /// A store in `directory`, holding `events` (written at once).
    init(directory: URL, events: [TrackedEvent] = []) throws {
        file = directory.appendingPathComponent("naive-queue.json")
        self.events = Locked(events)
        try write(events)
    }

    func load() -> [TrackedEvent] {
        events.value
    }

    func append(_ event: TrackedEvent) throws {
        try events.withLock { events in
            events.append(event)
            try write(events)
        }
    }

    func update(_ event: TrackedEvent) throws {
        try events.withLock { events in
            guard let index = events.firstIndex(where: { $0.id == event.id }) else { return }
            events[index] = event
            try write(events)
        }
    }

    func remove(id: TrackedEvent.ID) throws {
        try events.withLock { events in
            events.removeAll { $0.id == id }
            try write(events)
        }
    }

    private func write(_ events: [TrackedEvent]) throws {
        let data = try JSONEncoder().encode(events)
        let temporary = file.path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw BenchFailure("naive store: cannot open \(temporary) (errno \(errno))") }
        defer { close(fd) }
        var written = 0
        try data.withUnsafeBytes { buffer in
            while written < buffer.count {
                let result = SystemCall.write(fd, buffer.baseAddress! + written, buffer.count - written)
                guard result > 0 else { throw BenchFailure("naive store: write failed (errno \(errno))") }
                written += result
            }
        }
        guard fsync(fd) == 0 else { throw BenchFailure("naive store: fsync failed (errno \(errno))") }
        guard rename(temporary, file.path) == 0 else { throw BenchFailure("naive store: rename failed (errno \(errno))") }
    }
}
