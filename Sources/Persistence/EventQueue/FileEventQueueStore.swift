import Foundation
import SegmentsDomain

/// Keeps the tracking queue in `event-queue.journal` in the integration's storage directory, so
/// nothing queued is lost across restarts or crashes (see Behaviour E1, E4, P1).
///
/// The file is an append-only journal of JSON lines: appending an item writes one line (the queue
/// is never rewritten for it), removing or updating one appends a short line, and the file is
/// compacted atomically once most of it is dead. See `Docs/decisions/0001-event-queue-layout.md`.
///
/// Durability comes in two steps (see Behaviour R2, group commit): ``append(_:)`` returns once the line is
/// written to the file — the kernel has it, so it survives the process being killed — and
/// ``sync()`` (called by the pipeline on its storage queue, batched) makes every line written so
/// far survive a power cut.
///
/// Appends do not wait for the queue to be read (see Behaviour R3): the first append opens the file at its
/// end (cutting a torn last line) and ``load()`` reads the file up to that point without holding
/// the store's lock, then adds the items appended meanwhile.
///
/// Recovery (see Behaviour P2): a torn last line from a crash is cut off, unreadable lines are skipped and
/// logged, and a file with an unusable header is set aside as `event-queue.journal.corrupt-<n>` and
/// replaced by a queue holding only what was appended since.
///
/// Use one instance per directory: instances do not coordinate with each other.
public final class FileEventQueueStore: EventQueueStore {
    private struct State: Sendable {
        var journal = JournalState()
        /// Whether `journal.events` holds the whole file.
        var loaded = false
        /// Appends made before the file was read, with the offset each line starts at.
        var appendedBeforeLoad: [(offset: Int, event: TrackedEvent)] = []
        /// A compaction is being written outside the lock.
        var compacting = false
    }

    private let journal: EventJournal
    private let state = Locked(State())

    /// A store in `directory`, created owner-only (0700) on first use if it does not exist.
    /// Nothing is read or written until the first call.
    ///
    /// - Parameters:
    ///   - directory: the integration's storage directory, e.g.
    ///     a folder of the platform's application-support directory.
    ///     One store per file: never a directory a client of this process or another one also
    ///     uses (a client's own directory is guarded by its owner lock; this store is not).
    ///   - logger: where recovery from a damaged file is reported. Queued content is never logged.
    public init(directory: URL, logger: any SegmentsLogger) {
        let diagnostics = StoreDiagnostics(
            logger: logger, prefix: "Tracking:", subject: "event queue", fallback: "starting with an empty queue")
        self.journal = EventJournal(directory: StorageDirectory(url: directory), diagnostics: diagnostics)
    }

    deinit {
        state.withLock { journal.close(&$0.journal) }
    }

    /// Every queued item, oldest first. The file is read outside the store's lock, so appends go
    /// on meanwhile. When the file cannot be opened at all (logged), the items this instance knows
    /// of are returned.
    public func load() -> [TrackedEvent] {
        let snapshot = state.withLock { state -> Int? in
            guard !state.loaded else { return nil }
            do {
                try openForAppending(&state)
            } catch {
                journal.diagnostics.log(.error, "Could not open the event queue: \(error)")
                return nil
            }
            return state.loaded ? nil : state.journal.size
        }
        guard let snapshot else { return state.withLock { $0.journal.events.ordered } }
        let replay = try? JournalReplay.replay(POSIXFile.prefix(of: journal.path, length: snapshot))
        defer { compactIfDue() }
        return state.withLock { state in
            guard !state.loaded else { return state.journal.events.ordered }
            if let replay, replay.unreadableLines == 0, !replay.hasTornTail {
                state.journal.events = replay.events
                let later = state.appendedBeforeLoad.filter { $0.offset >= snapshot }
                for (_, event) in later { state.journal.events.append(event) }
                state.journal.recordLines = replay.recordLines + later.count
                state.loaded = true
                state.appendedBeforeLoad = []
            } else {
                // Damage: the full path re-reads the file under the lock, with its recovery.
                do { try openFully(&state) } catch {
                    journal.diagnostics.log(.error, "Could not open the event queue: \(error)")
                }
            }
            return state.journal.events.ordered
        }
    }

    /// Adds an item at the end of the queue: one buffered `write` of one line, no sync (see
    /// ``sync()``). An item with the same id is replaced and moves to the end. Throws
    /// ``SegmentsError`` with code `.storage` when it could not be written; the item is then not
    /// queued.
    public func append(_ event: TrackedEvent) throws {
        try change { state in
            let offset = state.journal.size
            guard state.loaded else {
                try journal.write(.append(event), to: &state.journal, durable: false)
                state.appendedBeforeLoad.append((offset, event))
                return
            }
            try journal.write(.append(event), to: &state.journal, durable: false)
            state.journal.events.append(event)
        }
    }

    /// Syncs every line written so far to stable storage, without holding the store's lock while
    /// the disk works, so appends go on meanwhile.
    public func sync() throws {
        let duplicate = state.withLock { POSIXFile.duplicate($0.journal.fd) }
        guard duplicate >= 0 else { return }
        defer { POSIXFile.closeQuietly(duplicate) }
        do {
            try POSIXFile.sync(duplicate, path: journal.path)
        } catch {
            throw SegmentsError.wrapping(error, as: .storage)
        }
    }

    /// Replaces the stored copy of the item with the same id, in place, synced before returning
    /// (the sync runs after the store's lock is released). An unknown id is a no-op: a removed
    /// item is never brought back.
    public func update(_ event: TrackedEvent) throws {
        try change(needsQueue: true) { state in
            guard state.journal.events.contains(event.id) else { return }
            try journal.write(.update(event), to: &state.journal, durable: false)
            state.journal.events.update(event)
        }
        try sync()
        compactIfDue()
    }

    /// Removes an item; an unknown id is a no-op.
    ///
    /// Not synced: if the power fails before the next sync, the item comes back after restart
    /// and is uploaded again, a duplicate Behaviour E4 accepts.
    public func remove(id: TrackedEvent.ID) throws {
        try change(needsQueue: true) { state in
            guard state.journal.events.contains(id) else { return }
            try journal.write(.remove(id), to: &state.journal, durable: false)
            state.journal.events.remove(id: id)
        }
        compactIfDue()
    }

    /// Compacts when most of the file is dead, without holding the store's lock while the new
    /// file is written and synced: appends go on meanwhile, and the lines they (and removals)
    /// wrote are copied over under the lock just before the new file replaces the old one. A
    /// failed compaction is only logged: the current file is still correct, just longer.
    private func compactIfDue() {
        let snapshot = state.withLock { state -> (events: QueuedEvents, size: Int, generation: Int)? in
            guard state.loaded, state.journal.isOpen, !state.compacting, EventJournal.compactionIsDue(state.journal)
            else { return nil }
            state.compacting = true
            return (state.journal.events, state.journal.size, state.journal.generation)
        }
        guard let snapshot else { return }
        do {
            let compacted = try journal.writeCompacted(snapshot.events.ordered)
            try state.withLock { state in
                defer { state.compacting = false }
                _ = try journal.publishCompacted(
                    compacted, snapshotSize: snapshot.size, generation: snapshot.generation, into: &state.journal)
            }
            journal.directory.syncDirectory()
        } catch {
            state.withLock { $0.compacting = false }
            journal.diagnostics.log(.warning, "Compacting the event queue failed, will retry later: \(error)")
        }
    }

    /// Runs `body` on the open journal (read whole first when `needsQueue`), turning every failure
    /// into a `.storage` error.
    private func change(needsQueue: Bool = false, _ body: (inout State) throws -> Void) throws {
        try state.withLock { state in
            do {
                try openForAppending(&state)
                if needsQueue, !state.loaded { try openFully(&state) }
                try body(&state)
            } catch {
                throw SegmentsError.wrapping(error, as: .storage)
            }
        }
    }

    /// Opens the journal at its end without reading it when that is safe, otherwise reads it whole.
    private func openForAppending(_ state: inout State) throws {
        guard !state.journal.isOpen else { return }
        if !state.loaded, let (fd, size) = journal.openTail() {
            state.journal.fd = fd
            state.journal.size = size
            return
        }
        try openFully(&state)
    }

    /// Reads the whole journal with its recovery (see Behaviour P2), under the lock. Items appended before
    /// the read are in the file, unless the file had to be set aside: then they are written again.
    private func openFully(_ state: inout State) throws {
        journal.close(&state.journal)
        state.journal = try journal.open()
        state.loaded = true
        for (_, event) in state.appendedBeforeLoad where !state.journal.events.contains(event.id) {
            try journal.write(.append(event), to: &state.journal, durable: true)
            state.journal.events.append(event)
        }
        state.appendedBeforeLoad = []
    }
}
