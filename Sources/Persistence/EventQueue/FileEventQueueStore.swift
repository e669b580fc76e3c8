import Foundation
import SegmentsDomain

/// Keeps the tracking queue in `event-queue.journal` in the integration's storage directory, so
/// nothing queued is lost across restarts or crashes (<doc:Behaviour#E1>, <doc:Behaviour#E4>,
/// <doc:Behaviour#P1>).
///
/// The file is an append-only journal of JSON lines: appending an item writes one line (the queue
/// is never rewritten for it), removing or updating one appends a short line, and the file is
/// compacted atomically once most of it is dead. See `Docs/decisions/0001-event-queue-layout.md`.
///
/// Durability comes in two steps (<doc:Behaviour#R2>, group commit): ``append(_:)`` returns once
/// the line is written to the file — the kernel has it, so it survives the process being killed — and
/// ``sync()`` (called by the pipeline on its storage queue, batched) makes every line written so
/// far survive a power cut.
///
/// Appends do not wait for the queue to be read (<doc:Behaviour#R1>, <doc:Behaviour#R3>): every
/// append, the first one included, costs the caller one buffered `write` — the first one adds a
/// cheap `open` (creating the file when missing) and `fstat`, but never a read, a sync, a rename or
/// a truncation. The file is not examined first, so the first write starts with a newline and a
/// header line (just the header when the file is empty): the newline ends a line a crash may have
/// left unfinished, and the header lets a reader trust the lines after it whatever came before.
/// ``load()`` (on the storage queue) reads the file up to that point without holding the store's
/// lock, adds the items appended meanwhile, and does whatever repair is due — the rewrite of a
/// damaged file without the lock too; ``sync()`` also
/// makes the directory entry of a file the append created durable.
///
/// Recovery (<doc:Behaviour#P2>): a torn last line from a crash is cut off (or, when an append has
/// already ended it, dropped by a rewrite), unreadable lines are skipped and logged, and a file
/// with an unusable header is set aside as `event-queue.journal.corrupt-<n>` and replaced by a
/// queue holding only what was appended since.
///
/// Use one instance per directory: instances do not coordinate with each other.
public final class FileEventQueueStore: EventQueueStore {
    private struct State: Sendable {
        var journal = JournalState()
        /// Whether `journal.events` holds the whole file.
        var loaded = false
        /// Appends made before the file was read, with the offset each line starts at.
        var appendedBeforeLoad: [(offset: Int, event: TrackedEvent)] = []
        /// The file's length when this instance first opened it without reading it: the bytes
        /// before it are another run's, the ones after it this instance's.
        var originalLength: Int?
        /// Whether this instance created the file (or, for an append's open, found it empty).
        var createdFile = false
        /// Whether the file's directory entry may be new and is not synced yet.
        var directoryNeedsSync = false
        /// A compaction is being written outside the lock.
        var compacting = false
        /// A compaction is due whatever the dead-line count: the file holds a torn line that an
        /// append ended, which a rewrite drops.
        var compactionWanted = false
        /// Items appended while protected data was not available (<doc:Behaviour#P8>), oldest first:
        /// kept in memory and written before the next item, or by ``retryAfterProtectedData()``.
        var held: [TrackedEvent] = []
        /// A load found the file refused because protected data was not available: it returned only
        /// the items known in memory (<doc:Behaviour#P8>).
        var loadRefused = false
    }

    private let journal: EventJournal
    private let state = Locked(State())
    /// Tells a refusal of the file that protected data explains from a storage error
    /// (<doc:Behaviour#P8>).
    private let refusals: StorageRefusals

    /// A store in `directory`, created owner-only (0700) on first use if it does not exist.
    /// Nothing is read or written until the first call.
    ///
    /// - Parameters:
    ///   - directory: the integration's storage directory, e.g.
    ///     a folder of the platform's application-support directory.
    ///     One store per file: never a directory a client of this process or another one also
    ///     uses (a client's own directory is guarded by its owner lock; this store is not).
    ///   - logger: where recovery from a damaged file is reported. Queued content is never logged.
    ///   - capacity: the most items read back from the file (<doc:Behaviour#P7>): the tracking
    ///     pipeline's capacity, 100,000 by default. The file itself is read only up to 48 MiB, and
    ///     appends past that are refused with `.storage` (<doc:Behaviour#E6>), so a queue is never
    ///     written that cannot be read back.
    ///
    /// A store made this way has no report of protected data's availability: see
    /// <doc:Behaviour#P8> for what a refused file then means.
    public init(directory: URL, logger: any SegmentsLogger, capacity: Int) {
        self.journal = Self.journal(in: directory, logger: logger, capacity: capacity)
        self.refusals = .unreported
    }

    /// A store in `directory` whose refused file is transient only while `protectedData` reports
    /// protected data unavailable (<doc:Behaviour#P8>): the client's own store. Otherwise an append
    /// the system refuses throws `.storage`, and nothing is kept in memory instead.
    package init(directory: URL, logger: any SegmentsLogger, capacity: Int, protectedData: any ProtectedDataAvailability) {
        self.journal = Self.journal(in: directory, logger: logger, capacity: capacity)
        self.refusals = StorageRefusals(protectedData: protectedData)
    }

    private static func journal(in directory: URL, logger: any SegmentsLogger, capacity: Int) -> EventJournal {
        let diagnostics = StoreDiagnostics(
            logger: logger, prefix: "Tracking:", subject: "event queue", fallback: "starting with an empty queue")
        return EventJournal(directory: StorageDirectory(url: directory), diagnostics: diagnostics, capacity: max(capacity, 1))
    }

    /// A store in `directory` reading back at most 100,000 items, the pipeline's default capacity
    /// (see ``init(directory:logger:capacity:)``).
    public convenience init(directory: URL, logger: any SegmentsLogger) {
        self.init(directory: directory, logger: logger, capacity: EventQueueLimits.defaultCapacity)
    }

    /// The most items this store reads back from its file (see ``init(directory:logger:capacity:)``).
    package var capacity: Int { journal.capacity }

    deinit {
        state.withLock { journal.close(&$0.journal) }
    }

    /// Every queued item, oldest first. The file is read outside the store's lock, so appends go
    /// on meanwhile; the repairs it needs (a header for a new file, cutting a torn last line,
    /// setting a damaged file aside) are made here, on the caller's queue (the storage queue),
    /// never by ``append(_:)``. A damaged file is re-read, set aside and rewritten outside the
    /// lock too (<doc:Behaviour#R1>): an append made meanwhile does not wait for it, and is in the
    /// rewritten file, once, after the items found (see `repair(_:)`). When the file cannot be
    /// opened at all (logged), the items this instance knows of are returned.
    public func load() -> [TrackedEvent] {
        let snapshot = state.withLock { state -> (size: Int, recordLines: Int)? in
            guard !state.loaded else { return nil }
            do {
                try openForAppending(&state, tellingCreation: true)
            } catch {
                guard let failure = refusals.failure(error) else {
                    // Not now (see Behaviour P8): nothing is set aside; the items known in memory are
                    // answered, and the file is read by `retryAfterProtectedData()`.
                    journal.diagnostics.protectedDataUnavailable(EventJournal.fileName, doing: "read")
                    state.loadRefused = true
                    return nil
                }
                journal.diagnostics.log(.error, "Could not open the event queue: \(failure)")
                return nil
            }
            return state.loaded ? nil : (state.journal.size, state.journal.recordLines)
        }
        guard let snapshot else { return state.withLock(Self.knownItems) }
        journal.directory.removeStrayTemporaries(of: EventJournal.fileName)
        // The file's bytes are let go of once replayed: a damaged file is read again below, and
        // two copies of it must never be held at once (<doc:Behaviour#P7>).
        let (replay, readEmpty) = readForLoad(length: snapshot.size)
        defer { compactIfDue() }
        let outcome = state.withLock { state -> LoadOutcome in
            guard !state.loaded else { return .read(state.journal.events.ordered, wroteHeader: false) }
            let later = state.appendedBeforeLoad.filter { $0.offset >= snapshot.size }
            let linesSince = state.journal.recordLines - snapshot.recordLines
            var wroteHeader = false
            if readEmpty, state.createdFile || !state.appendedBeforeLoad.isEmpty {
                // No earlier queue: this instance created the file, or its appends wrote the
                // header of an empty one (a crash came between creating it and writing to it).
                // A file still empty gets its header now, so it is not taken for damage later.
                for (_, event) in later { state.journal.events.append(event) }
                state.journal.recordLines = linesSince
                if state.journal.isOpen, state.journal.size == 0 {
                    do {
                        try journal.writeHeaderIfEmpty(&state.journal)
                        wroteHeader = true
                    } catch {
                        journal.diagnostics.log(.error, "Could not write the event queue's header: \(error)")
                    }
                }
                if state.createdFile { journal.diagnostics.missing(EventJournal.fileName) }
                finishLoading(&state)
            } else if let replay, replay.unreadableLines == 0, replay.headerProblem == nil {
                state.journal.events = replay.events
                for (_, event) in later { state.journal.events.append(event) }
                state.journal.recordLines = replay.recordLines + linesSince
                let untouched = state.journal.isOpen && state.journal.size == snapshot.size
                if replay.hasTornTail || replay.closedTornLines > 0 {
                    // The interrupted append never returned, so nobody was told it was stored.
                    journal.diagnostics.log(
                        .warning, "Discarded an incomplete last record of the event queue, left by an interrupted write")
                    if replay.hasTornTail {
                        if untouched, POSIXFile.cut(state.journal.fd, to: replay.completeLength, path: journal.path) {
                            state.journal.size = replay.completeLength
                            state.journal.next = .sound
                        } else {
                            // Ended by an append's newline (or to be): a dead line, which a rewrite drops.
                            state.journal.recordLines += 1
                            state.compactionWanted = true
                        }
                    }
                    // A torn line an append ended is a dead line a rewrite drops.
                    if replay.closedTornLines > 0 { state.compactionWanted = true }
                } else if untouched {
                    state.journal.next = .sound  // the file was read to its end, which is sound
                }
                finishLoading(&state)
            } else if state.journal.isOpen {
                // Damage: repaired after the lock is released, so appends go on meanwhile (R1); a
                // copy set aside holds only the bytes this instance found, not what it appended.
                return .damaged(
                    Repair(
                        length: state.journal.size, start: state.journal.next, generation: state.journal.generation,
                        originalLength: state.appendedBeforeLoad.isEmpty ? nil : state.originalLength,
                        appended: state.appendedBeforeLoad.map(\.event)))
            } else {
                openFullyForLoad(&state)
            }
            return .read(Self.knownItems(&state), wroteHeader: wroteHeader)
        }
        switch outcome {
        case .read(let items, let wroteHeader):
            if wroteHeader { try? sync() }
            return items
        case .damaged(let repair):
            return self.repair(repair)
        }
    }

    /// What the load's second look under the lock found.
    private enum LoadOutcome {
        /// The queue, read (or as known when the file could not be).
        case read([TrackedEvent], wroteHeader: Bool)
        /// Damage to repair, as the lock found the journal.
        case damaged(Repair)
    }

    /// A damaged journal as the load found it: its length then (the bytes the repair reads), what
    /// the next append's write starts with, its descriptor's generation, and the appends made
    /// before it was read.
    private struct Repair {
        let length: Int
        let start: JournalState.Start
        let generation: Int
        let originalLength: Int?
        let appended: [TrackedEvent]
    }

    /// Repairs a damaged journal without holding the store's lock while the file is re-read, a
    /// copy is set aside and the repaired queue is written (<doc:Behaviour#R1>, <doc:Behaviour#P2>):
    /// an append made meanwhile goes on to the journal as usual and is carried into the repaired
    /// file when it replaces the journal, under the lock, in one short step (see
    /// ``EventJournal/prepareRepair(length:originalLength:appended:)``). When the repair cannot be
    /// made that way — its write failed, or the journal was re-opened meanwhile — the full open
    /// runs under the lock, as before this repair existed (rare: a full disk, an I/O error).
    private func repair(_ repair: Repair) -> [TrackedEvent] {
        var prepared = try? journal.prepareRepair(
            length: repair.length, originalLength: repair.originalLength, appended: repair.appended)
        let answer = state.withLock { state -> RepairAnswer in
            guard !state.loaded else {
                if let prepared { journal.discard(prepared) }
                return .read(Self.knownItems(&state))
            }
            // `prepared` is used in place, never bound to a copy: its queue moves into the state
            // without being copied (see `EventJournal.publishRepair`).
            if prepared != nil {
                if state.journal.isOpen, state.journal.generation == repair.generation, state.journal.size >= repair.length {
                    let since = state.appendedBeforeLoad.filter { $0.offset >= repair.length }.map(\.event)
                    do {
                        let inOrder = try journal.publishRepair(
                            &prepared!, readLength: repair.length, start: repair.start, appendedSince: since,
                            into: &state.journal)
                        state.compactionWanted = false
                        finishLoading(&state)
                        return .repaired(prepared!, since: since, held: state.held, read: inOrder ? nil : Self.knownItems(&state))
                    } catch {
                        // Discarded: the full open below.
                    }
                } else {
                    journal.discard(prepared!)
                }
            }
            openFullyForLoad(&state)
            return .read(Self.knownItems(&state))
        }
        switch answer {
        case .read(let items):
            return items
        case .repaired(let prepared, let since, let held, let read):
            journal.directory.syncDirectory()
            prepared.report.forEach { $0() }
            try? sync()  // the lines carried over were written after the repaired file's sync
            return read ?? prepared.ordered + since + held
        }
    }

    /// What the repair's step under the lock found.
    private enum RepairAnswer {
        /// The queue as the lock left it (the repair was not published).
        case read([TrackedEvent])
        /// The repair was published: the queue is its items, then `since` (appended meanwhile),
        /// then `held` (<doc:Behaviour#P8>) — put together after the lock — or, when an item was
        /// appended twice, `read`.
        case repaired(EventJournal.PreparedRepair, since: [TrackedEvent], held: [TrackedEvent], read: [TrackedEvent]?)
    }

    /// The load's full path under the lock: the file re-read with its recovery (see
    /// ``openFully(_:originalLength:)``); a copy set aside holds only the bytes this instance found.
    private func openFullyForLoad(_ state: inout State) {
        do {
            try openFully(&state, originalLength: state.appendedBeforeLoad.isEmpty ? nil : state.originalLength)
        } catch {
            journal.diagnostics.log(.error, "Could not open the event queue: \(error)")
        }
    }

    /// Replays the first `length` bytes of the file; returns the replay (`nil` when the file could
    /// not be read or its header is unusable) and whether the bytes read were none. The bytes are
    /// released on return.
    private func readForLoad(length: Int) -> (replay: JournalReplay?, readEmpty: Bool) {
        guard let data = try? POSIXFile.prefix(of: journal.path, length: length) else { return (nil, false) }
        return (try? JournalReplay.replay(data, capacity: journal.capacity), data.isEmpty)
    }

    /// The items this instance knows of: the queue, and, before it could be read, what was
    /// appended to it.
    private static func knownItems(_ state: inout State) -> [TrackedEvent] {
        (state.loaded ? state.journal.events.ordered : state.appendedBeforeLoad.map(\.event)) + state.held
    }

    /// Marks the queue as read whole.
    private func finishLoading(_ state: inout State) {
        state.loaded = true
        state.appendedBeforeLoad = []
    }

    /// Adds an item at the end of the queue: one buffered `write` of one line, no sync (see
    /// ``sync()``), no read. The first call also opens the file (creating it if missing) with a
    /// cheap `open`, without reading it; the line then starts with what the unread file needs
    /// (see the type's documentation). An item with the same id is replaced and moves to the end.
    /// Throws ``SegmentsError`` with code `.storage` when it could not be written; the item is then
    /// not queued.
    ///
    /// While protected data is not available (<doc:Behaviour#P8>) the item is kept in memory instead,
    /// without throwing: ``load()`` answers it, and it is written, in order, before the next item
    /// or when protected data becomes available. Until then it does not survive the process ending.
    /// A file the system refuses while protected data is available is a `.storage` error: the item
    /// is not queued, and nothing lives only in memory.
    public func append(_ event: TrackedEvent) throws {
        try state.withLock { state in
            do {
                try openForAppending(&state)
                try writeHeld(&state)
                try write(event, &state)
            } catch {
                guard let failure = refusals.failure(error) else {
                    if state.held.isEmpty { journal.diagnostics.protectedDataUnavailable(EventJournal.fileName, doing: "written") }
                    state.held.removeAll { $0.id == event.id }
                    state.held.append(event)
                    return
                }
                throw SegmentsError.wrapping(failure, as: .storage)
            }
        }
    }

    /// Appends the line of one item to the open journal. When the line would take the file past
    /// the append limit and a loaded queue holds dead lines, the file is compacted first (under
    /// the lock: rare, and only near the cap), since the size that matters is what the reader
    /// will be given; if it still does not fit, the append is refused (<doc:Behaviour#E6>,
    /// <doc:Behaviour#P7>).
    private func write(_ event: TrackedEvent, _ state: inout State) throws {
        makeRoom(for: .append(event), limit: POSIXFile.journalAppendLimit, &state)
        let offset = state.journal.size
        try journal.append(event, to: &state.journal)
        if state.loaded {
            state.journal.events.append(event)
        } else {
            state.appendedBeforeLoad.append((offset, event))
        }
    }

    /// Compacts a loaded journal whose next line `entry` would pass `limit`, when that leaves it
    /// shorter (it holds dead lines). A failed compaction is logged; the write then decides.
    private func makeRoom(for entry: @autoclosure () -> JournalEntry, limit: Int, _ state: inout State) {
        // Cheap test first: an append far from the cap pays no second encoding of its line, nor
        // the making of its entry (the caller's cost, Behaviour R2). A line over 1 MiB near the cap
        // is refused uncompacted.
        guard state.loaded, state.journal.isOpen, state.journal.deadLines > 0, limit - state.journal.size < 1 << 20,
            let line = try? entry().line(),
            EventJournal.wouldPassCap(state.journal, adding: line.count + state.journal.next.bytes.count, limit: limit)
        else { return }
        do {
            try journal.compact(&state.journal)
            state.compactionWanted = false
        } catch {
            journal.diagnostics.log(.warning, "Compacting the event queue failed, will retry later: \(error)")
        }
    }

    /// Writes the items kept in memory while protected data was not available, oldest first.
    private func writeHeld(_ state: inout State) throws {
        while let event = state.held.first {
            try write(event, &state)
            state.held.removeFirst()
        }
    }

    /// Does what was refused because protected data was not available (<doc:Behaviour#P8>): writes
    /// the items kept in memory, then, when a load could not read the file, reads it. Call it on
    /// the storage queue when protected data becomes available.
    ///
    /// - Returns: every queued item, oldest first, when a load had answered only the items known
    ///   in memory (the owner queues those it does not know yet); otherwise `nil`.
    package func retryAfterProtectedData() -> [TrackedEvent]? {
        let (wrote, reload) = state.withLock { state -> (Bool, Bool) in
            guard !state.held.isEmpty else { return (false, state.loadRefused) }
            do {
                try openForAppending(&state)
                try writeHeld(&state)
            } catch {
                if let failure = refusals.failure(error) {
                    journal.diagnostics.log(.error, "Could not write the event queue: \(failure)")
                }
                return (false, false)
            }
            return (true, state.loadRefused)
        }
        if wrote { try? sync() }
        guard reload else { return nil }
        state.withLock { $0.loadRefused = false }
        let items = load()
        // Refused again (the load said so): the next signal tries again.
        return state.withLock { $0.loadRefused } ? nil : items
    }

    /// Syncs every line written so far to stable storage, without holding the store's lock while
    /// the disk works, so appends go on meanwhile. When this instance created the file, the first
    /// sync also syncs the directory, so the file's name survives a power cut too.
    public func sync() throws {
        let (duplicate, directoryNeedsSync) = state.withLock { (POSIXFile.duplicate($0.journal.fd), $0.directoryNeedsSync) }
        guard duplicate >= 0 else { return }
        defer { POSIXFile.closeQuietly(duplicate) }
        do {
            try POSIXFile.sync(duplicate, path: journal.path)
        } catch {
            throw SegmentsError.wrapping(refusals.settled(error), as: .storage)
        }
        if directoryNeedsSync {
            journal.directory.syncDirectory()
            state.withLock { $0.directoryNeedsSync = false }
        }
    }

    /// Replaces the stored copy of the item with the same id, in place, synced before returning
    /// (the sync runs after the store's lock is released). An unknown id is a no-op: a removed
    /// item is never brought back.
    public func update(_ event: TrackedEvent) throws {
        let held = state.withLock { state in
            guard let index = state.held.firstIndex(where: { $0.id == event.id }) else { return false }
            state.held[index] = event
            return true
        }
        if held { return }
        try change(needsQueue: true) { state in
            guard state.journal.events.contains(event.id) else { return }
            makeRoom(for: .update(event), limit: POSIXFile.maximumJournalSize, &state)
            try journal.write(.update(event), to: &state.journal, durable: false)
            state.journal.events.update(event)
        }
        try sync()
        compactIfDue()
    }

    /// Removes an item; an unknown id is a no-op.
    ///
    /// Not synced: if the power fails before the next sync, the item comes back after restart
    /// and is uploaded again, a duplicate that at-least-once delivery accepts (<doc:Behaviour#E4>).
    public func remove(id: TrackedEvent.ID) throws {
        let held = state.withLock { state in
            guard let index = state.held.firstIndex(where: { $0.id == id }) else { return false }
            state.held.remove(at: index)
            return true
        }
        if held { return }  // never written (see Behaviour P8)
        try change(needsQueue: true) { state in
            guard state.journal.events.contains(id) else { return }
            makeRoom(for: .remove(id), limit: POSIXFile.maximumJournalSize, &state)
            try journal.write(.remove(id), to: &state.journal, durable: false)
            state.journal.events.remove(id: id)
        }
        compactIfDue()
    }

    /// Removes `ids`, and deletes the file when nothing is left (``erase(ids:)``).
    func eraseItems(_ ids: [TrackedEvent.ID]) throws {
        let erased = Set(ids)
        try state.withLock { state in
            state.held.removeAll { erased.contains($0.id) }
            do {
                try openForAppending(&state)
                if !state.loaded { try openFully(&state) }
                for id in ids where state.journal.events.contains(id) {
                    try journal.write(.remove(id), to: &state.journal, durable: false)
                    _ = state.journal.events.remove(id: id)
                }
                if state.journal.events.count == 0, state.held.isEmpty, !state.compacting {
                    journal.close(&state.journal)
                    _ = journal.directory.remove(EventJournal.fileName)
                    state = State()
                }
            } catch {
                throw SegmentsError.wrapping(refusals.settled(error), as: .storage)
            }
        }
    }

    /// Compacts when most of the file is dead, without holding the store's lock while the new
    /// file is written and synced: appends go on meanwhile, and the lines they (and removals)
    /// wrote are copied over under the lock just before the new file replaces the old one. A
    /// failed compaction is only logged: the current file is still correct, just longer.
    private func compactIfDue() {
        let snapshot = state.withLock { state -> (events: QueuedEvents, size: Int, generation: Int)? in
            guard state.loaded, state.journal.isOpen, !state.compacting,
                state.compactionWanted || EventJournal.compactionIsDue(state.journal)
            else { return nil }
            state.compacting = true
            return (state.journal.events, state.journal.size, state.journal.generation)
        }
        guard let snapshot else { return }
        do {
            let compacted = try journal.writeCompacted(snapshot.events.ordered)
            try state.withLock { state in
                defer { state.compacting = false }
                if try journal.publishCompacted(
                    compacted, snapshotSize: snapshot.size, generation: snapshot.generation, into: &state.journal)
                {
                    state.compactionWanted = false
                }
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
                throw SegmentsError.wrapping(refusals.settled(error), as: .storage)
            }
        }
    }

    /// Opens the journal for appending without reading it (<doc:Behaviour#R1>) until the queue has
    /// been read; otherwise — and for a file that must be examined before anything is written to
    /// it (<doc:Behaviour#P7>) — reads it whole.
    ///
    /// The load asks whether the file was created by this open, to tell a new file from one left
    /// empty (damage, <doc:Behaviour#P2>); an append needs no answer, so it pays a single `open`.
    private func openForAppending(_ state: inout State, tellingCreation: Bool = false) throws {
        guard !state.journal.isOpen else { return }
        if !state.loaded, let (opened, created) = try journal.openWithoutReading(tellingCreation: tellingCreation) {
            state.journal.fd = opened.fd
            state.journal.size = opened.size
            state.journal.next = opened.next
            if state.originalLength == nil { state.originalLength = opened.size }
            if created {
                state.createdFile = true
                state.directoryNeedsSync = true
            }
            return
        }
        try openFully(&state)
    }

    /// Reads the whole journal with its recovery (<doc:Behaviour#P2>), under the lock. Items
    /// appended before the read are in the file, unless the file had to be set aside: then they are
    /// written again.
    private func openFully(_ state: inout State, originalLength: Int? = nil) throws {
        journal.close(&state.journal)
        state.journal = try journal.open(originalLength: originalLength)
        state.loaded = true
        state.compactionWanted = false
        for (_, event) in state.appendedBeforeLoad where !state.journal.events.contains(event.id) {
            try journal.write(.append(event), to: &state.journal, durable: true)
            state.journal.events.append(event)
        }
        state.appendedBeforeLoad = []
    }
}
