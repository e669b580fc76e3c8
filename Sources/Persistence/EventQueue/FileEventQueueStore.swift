import Foundation
import SegmentsDomain

/// Keeps the tracking queue in `event-queue.journal` in the integration's storage directory, so
/// nothing queued is lost across restarts or crashes (SPEC E1, E4, P1).
///
/// The file is an append-only journal of JSON lines: appending an item writes and syncs one line
/// (the queue is never rewritten for it), removing or updating one appends a short line, and the
/// file is compacted atomically once most of it is dead. See
/// `Docs/decisions/0001-event-queue-layout.md`.
///
/// Recovery (SPEC P2): a torn last line from a crash is cut off, unreadable lines are skipped and
/// logged, and a file with an unusable header is set aside as `event-queue.journal.corrupt-<n>` and
/// replaced by an empty queue. The file is read on the first call; later reads are answered from
/// memory.
///
/// Use one instance per directory: instances do not coordinate with each other.
public final class FileEventQueueStore: EventQueueStore {
    private let journal: EventJournal
    private let state = Locked(JournalState())

    /// A store in `directory`, created owner-only (0700) on first use if it does not exist.
    /// Nothing is read or written until the first call.
    ///
    /// - Parameters:
    ///   - directory: the integration's storage directory, e.g.
    ///     ``StorageLocation/defaultDirectory(integrationId:)``.
    ///   - logger: where recovery from a damaged file is reported. Queued content is never logged.
    public init(directory: URL, logger: any SegmentsLogger) {
        let diagnostics = StoreDiagnostics(
            logger: logger, prefix: "Tracking:", subject: "event queue", fallback: "starting with an empty queue")
        self.journal = EventJournal(directory: StorageDirectory(url: directory), diagnostics: diagnostics)
    }

    deinit {
        state.withLock { journal.close(&$0) }
    }

    /// Every queued item, oldest first. When the file cannot be opened at all (logged), the items
    /// this instance knows of are returned.
    public func load() -> [TrackedEvent] {
        state.withLock { state in
            do {
                try openIfNeeded(&state)
            } catch {
                journal.diagnostics.log(.error, "Could not open the event queue: \(error)")
            }
            return state.events.ordered
        }
    }

    /// Adds an item at the end of the queue and syncs it to disk before returning. An item with
    /// the same id is replaced and moves to the end. Throws ``SegmentsError`` with code `.storage`
    /// when it could not be stored; the item is then not queued.
    public func append(_ event: TrackedEvent) throws {
        try change { state in
            let replaces = state.events.contains(event.id)
            try journal.write(.append(event), to: &state, durable: true)
            state.events.append(event)
            if replaces { journal.compactIfWorthwhile(&state) }
        }
    }

    /// Replaces the stored copy of the item with the same id, in place, synced before returning.
    /// An unknown id is a no-op: a removed item is never brought back.
    public func update(_ event: TrackedEvent) throws {
        try change { state in
            guard state.events.contains(event.id) else { return }
            try journal.write(.update(event), to: &state, durable: true)
            state.events.update(event)
            journal.compactIfWorthwhile(&state)
        }
    }

    /// Removes an item; an unknown id is a no-op.
    ///
    /// Not synced: if the process dies before the next sync, the item comes back after restart
    /// and is uploaded again, a duplicate SPEC E4 accepts; the sync of the next append or
    /// compaction makes the removal durable too.
    public func remove(id: TrackedEvent.ID) throws {
        try change { state in
            guard state.events.contains(id) else { return }
            try journal.write(.remove(id), to: &state, durable: false)
            state.events.remove(id: id)
            journal.compactIfWorthwhile(&state)
        }
    }

    /// Runs `body` on the open journal, turning every failure into a `.storage` error.
    private func change(_ body: (inout JournalState) throws -> Void) throws {
        try state.withLock { state in
            do {
                try openIfNeeded(&state)
                try body(&state)
            } catch {
                throw SegmentsError.wrapping(error, as: .storage)
            }
        }
    }

    private func openIfNeeded(_ state: inout JournalState) throws {
        if !state.isOpen { state = try journal.open() }
    }
}
