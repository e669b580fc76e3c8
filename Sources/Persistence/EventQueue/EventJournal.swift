import Foundation
import SegmentsDomain

/// The open event journal: the descriptor appends go to, and the queue it describes.
struct JournalState: Sendable {
    /// The descriptor, open for appending; `-1` until the journal is opened, and again after a
    /// failed write, so the next call re-opens the file rather than trusting a half-written tail
    /// (before the load without reading it, the next line then starting with a newline and a
    /// header; after it, reading it whole).
    var fd: Int32 = -1
    /// The file's sound length: where the next line starts.
    var size = 0
    /// Lines after the header; the ones not describing a queued item are dead.
    var recordLines = 0
    /// The queue.
    var events = QueuedEvents()

    /// Whether the journal is open.
    var isOpen: Bool { fd >= 0 }
    /// Lines that compaction would drop.
    var deadLines: Int { recordLines - events.count }
    /// Changes whenever the descriptor is replaced or closed, so a compaction prepared outside the
    /// lock can tell that the file it copied is no longer the one in use.
    var generation = 0
    /// What the next write must start with, for a descriptor opened without reading the file.
    var next = Start.sound

    /// What a write must put before its line (<doc:Behaviour#R1>, Docs/decisions/0001).
    enum Start: Sendable {
        /// Nothing: the file ends with a complete line this store knows of.
        case sound
        /// The header: the file is empty (just created, or a crash came between its creation
        /// and its first write).
        case header
        /// A newline and the header: the file was not read, so it may end in a line a crash cut
        /// short (the newline ends it, and a reader skips it as torn), and its header may be
        /// damaged or of another version (the lines after this header are still read).
        case newlineAndHeader

        /// The bytes.
        var bytes: Data {
            switch self {
            case .sound: Data()
            case .header: JournalHeader.line
            case .newlineAndHeader: Data([JournalReplay.newline]) + JournalHeader.line
            }
        }

        /// The lines they add after the file's first line: the empty line and the header are
        /// dead lines; a header that starts the file is not a record line.
        var recordLines: Int {
            switch self {
            case .sound, .header: 0
            case .newlineAndHeader: 2
            }
        }
    }
}

/// The event queue's file: an append-only journal of JSON lines, compacted when most of it is
/// dead (Docs/decisions/0001-event-queue-layout.md).
struct EventJournal: Sendable {
    /// The file's name inside the storage directory.
    static let fileName = "event-queue.journal"
    /// Compaction waits for at least this many dead lines, so a short queue that is drained after
    /// every upload is not rewritten every time.
    static let minimumDeadLinesToCompact = 512

    let directory: StorageDirectory
    let diagnostics: StoreDiagnostics
    /// The most items a replay decodes (see ``JournalReplay/replay(_:capacity:)``).
    var capacity: Int
    /// The journal's path, made once: building it from the directory's URL took longer than the
    /// `write` of an append (<doc:Behaviour#R2>).
    let path: String

    /// The journal in `directory`, reading back at most `capacity` items.
    init(directory: StorageDirectory, diagnostics: StoreDiagnostics, capacity: Int = EventQueueLimits.defaultCapacity) {
        self.directory = directory
        self.diagnostics = diagnostics
        self.capacity = capacity
        self.path = directory.path(of: Self.fileName)
    }

    /// Opens the journal for appending without reading it (<doc:Behaviour#R1>, <doc:Behaviour#R3>),
    /// creating it when missing: the cheap open the first append pays. The first write then starts
    /// with what ``JournalState/next`` says. Returns the state and whether the file's directory
    /// entry may be new (exactly: whether this call created it, with `tellingCreation`; see
    /// `POSIXFile.openJournalForAppending`); `nil` when the full ``open(originalLength:)`` must run
    /// (a file that is not a regular file of this user within the size cap, <doc:Behaviour#P7>).
    func openWithoutReading(tellingCreation: Bool) throws -> (state: JournalState, created: Bool)? {
        try directory.create()
        guard
            let opened = try POSIXFile.openJournalForAppending(
                path, maximumSize: POSIXFile.maximumJournalSize, tellingCreation: tellingCreation)
        else { return nil }
        let state = JournalState(fd: opened.fd, size: opened.size, next: opened.size == 0 ? .header : .newlineAndHeader)
        return (state, opened.created)
    }

    /// Opens the journal, recovering from whatever a crash or damage left (<doc:Behaviour#P2>,
    /// <doc:Behaviour#E4>): stray temporary files are deleted, a torn last line is cut off (and one
    /// that a later append ended is dropped by a rewrite), unreadable lines are skipped (the
    /// damaged file is kept aside and a clean one written), and a file whose header is unusable is
    /// set aside whole and replaced by an empty queue — or, when a later store's first append wrote
    /// a header after it, by the items appended after that header.
    ///
    /// - Parameter originalLength: the file's length before this process appended to it, when it
    ///   did: a copy set aside then holds those bytes only, exactly as they were found.
    func open(originalLength: Int? = nil) throws -> JournalState {
        try directory.create()
        directory.removeStrayTemporaries(of: Self.fileName)
        let contents: Data?
        do {
            contents = try POSIXFile.contents(of: path, maximumSize: POSIXFile.maximumJournalSize)
        } catch let untrusted as UntrustedFile {
            let asideName = directory.setAside(Self.fileName)
            diagnostics.setAside(Self.fileName, problem: .untrusted(untrusted), asideName: asideName, detail: nil)
            var state = JournalState()
            try compact(&state)
            return state
        }
        guard let data = contents else {
            diagnostics.missing(Self.fileName)
            var state = JournalState()
            try compact(&state)
            return state
        }
        let replay: JournalReplay
        do throws(DecodeFailure) {
            replay = try JournalReplay.replay(data, capacity: capacity)
        } catch {
            let asideName = directory.setAside(Self.fileName)
            diagnostics.setAside(Self.fileName, problem: error.problem, asideName: asideName, detail: error.detail)
            var state = JournalState()
            try compact(&state)
            return state
        }
        var state = JournalState(size: replay.completeLength, recordLines: replay.recordLines, events: replay.events)
        if let problem = replay.headerProblem, let later = replay.laterHeaderOffset {
            // The items appended after the later header are kept. The bytes before it are set aside
            // as they were (without the newline that ended them) — or, when lines after it are
            // damaged too, the whole file as it was found, before this process's appends.
            let aside = replay.unreadableLines > 0 ? (originalLength ?? data.count) : (originalLength ?? (later - 1))
            let asideName = directory.setAside(Self.fileName, contents: data.prefix(aside))
            diagnostics.setAside(Self.fileName, problem: problem.problem, asideName: asideName, detail: problem.detail)
            try compact(&state)
            return state
        }
        if replay.unreadableLines > 0,
            rebuild(&state, skipping: replay.unreadableLines, original: originalLength.map { data.prefix($0) })
        {
            return state
        }
        state.fd = try POSIXFile.openForAppending(path)
        if replay.hasTornTail || replay.closedTornLines > 0 {
            // The interrupted append never returned, so nobody was told it was stored; cutting it
            // off keeps the next line from being glued to its remains. One that a later append
            // already ended is dropped by rewriting the file.
            diagnostics.log(.warning, "Discarded an incomplete last record of the event queue, left by an interrupted write")
            var rewritten = false
            if replay.closedTornLines > 0 {
                do {
                    try compact(&state)
                    rewritten = true
                } catch {
                    diagnostics.log(.warning, "Compacting the event queue failed, will retry later: \(error)")
                }
            }
            if replay.hasTornTail, !rewritten, !POSIXFile.cut(state.fd, to: state.size, path: path) { try compact(&state) }
        }
        compactIfWorthwhile(&state)
        return state
    }

    // MARK: - Repairing beside appends

    /// A repair of a damaged journal, prepared without the store's lock (<doc:Behaviour#R1>): the
    /// repaired queue is written to a temporary file and a copy of the damage is set aside, while
    /// appends go on to the journal; ``publishRepair(_:readLength:appendedSince:into:)`` then
    /// replaces the journal under the lock, or ``discard(_:)`` undoes it.
    struct PreparedRepair {
        /// The temporary file: a header and one append line per item of ``events``, synced.
        let temporary: String
        /// Its length and its lines after the header.
        let size: Int
        let recordLines: Int
        /// The repaired queue, and its items oldest first (sorted here, not under the lock). The
        /// queue is moved into the journal's state when published, so it is not copied there.
        var events: QueuedEvents
        let ordered: [TrackedEvent]
        /// The copy of the damage set aside, if one could be made.
        let asideName: String?
        /// Whether that copy is a second name of the journal itself (a hard link), which holds
        /// the appends made during the repair too until it is cut back when published.
        let asideIsLink: Bool
        /// What the repair found and did, logged once it is published (a discarded repair says
        /// nothing: the full open that follows says it again).
        let report: [() -> Void]
    }

    /// The expensive half of a repair, run without the store's lock while appends go on: the first
    /// `length` bytes of the journal (everything written when the damage was found) are read and
    /// replayed, the damage is set aside as ``open(originalLength:)`` would set it aside, and the
    /// repaired queue — the readable items, then `appended` (this store's appends that the file
    /// lost) — is written to a temporary file. Nothing that appends write to is renamed or
    /// replaced: a copy is set aside by copying its bytes, or by a second name that
    /// ``publishRepair(_:readLength:appendedSince:into:)`` cuts back to those bytes.
    ///
    /// - Returns: `nil` when those bytes need no repair after all (the file changed).
    /// - Throws: when the bytes could not be read or the repaired queue could not be written;
    ///   whatever the repair had made is removed, and the journal is as it was.
    func prepareRepair(length: Int, originalLength: Int?, appended: [TrackedEvent]) throws -> PreparedRepair? {
        let data = try POSIXFile.prefix(of: path, length: length)
        var events = QueuedEvents()
        var asideName: String?
        var asideIsLink = false
        var report: [() -> Void] = []
        let diagnostics = self.diagnostics
        do throws(DecodeFailure) {
            let replay = try JournalReplay.replay(data, capacity: capacity)
            if let problem = replay.headerProblem, let later = replay.laterHeaderOffset {
                // As in `open`: the bytes before the later header, or the whole file as found.
                let aside = replay.unreadableLines > 0 ? (originalLength ?? data.count) : (originalLength ?? (later - 1))
                let name = directory.setAside(Self.fileName, contents: data.prefix(aside))
                asideName = name
                report.append { diagnostics.setAside(Self.fileName, problem: problem.problem, asideName: name, detail: problem.detail) }
            } else if replay.unreadableLines > 0 {
                let original = originalLength.map { data.prefix($0) }
                let name = directory.setAside(Self.fileName, keepingOriginal: true, contents: original)
                asideName = name
                asideIsLink = original == nil
                let disposal = name.map { "a copy was set aside as \($0)" } ?? "no copy could be kept"
                let unreadable = replay.unreadableLines
                report.append {
                    diagnostics.log(
                        .warning, "Skipped \(unreadable) unreadable records of the event queue; \(disposal) and the queue was rewritten")
                }
            } else {
                return nil
            }
            events = replay.events
        } catch {
            // No line can be trusted: the whole file as found is set aside, the queue starts empty.
            let name = directory.setAside(Self.fileName, contents: data.prefix(originalLength ?? data.count))
            asideName = name
            report.append { diagnostics.setAside(Self.fileName, problem: error.problem, asideName: name, detail: error.detail) }
        }
        for event in appended where !events.contains(event.id) { events.append(event) }
        do {
            let ordered = events.ordered
            let compacted = try writeCompacted(ordered)
            return PreparedRepair(
                temporary: compacted.path, size: compacted.size, recordLines: compacted.lines, events: events,
                ordered: ordered, asideName: asideName, asideIsLink: asideIsLink, report: report)
        } catch {
            if let asideName { POSIXFile.delete(directory.path(of: asideName)) }
            throw error
        }
    }

    /// The short half of a repair, under the store's lock: the lines appended since the repair
    /// read the journal's first `readLength` bytes — `appendedSince`, whose first write started
    /// with `start` — are copied to the end of the temporary file, which then replaces the journal
    /// (one rename) and is opened for appending; a copy set aside by a second name is cut back to
    /// the bytes read. An append is thus never written to a file that is no longer the journal,
    /// and nothing is encoded or sorted under the lock. On failure (before the rename) the repair
    /// is discarded and the journal is as it was.
    ///
    /// - Returns: whether the queue's items, oldest first, are `repair.ordered + appendedSince`
    ///   (no item appended twice), so the caller can build them after the lock.
    func publishRepair(
        _ repair: inout PreparedRepair, readLength: Int, start: JournalState.Start, appendedSince: [TrackedEvent],
        into state: inout JournalState
    ) throws -> Bool {
        var tailLength = 0
        do {
            let from = readLength + (appendedSince.isEmpty ? 0 : start.bytes.count)
            if from < state.size {
                let tail = try POSIXFile.bytes(of: path, in: from..<state.size)
                let fd = try POSIXFile.openForAppending(repair.temporary)
                defer { POSIXFile.closeQuietly(fd) }
                try POSIXFile.writeAll(fd, tail, path: repair.temporary)
                tailLength = tail.count
            }
            try directory.publish(repair.temporary, as: Self.fileName)
        } catch {
            discard(repair)
            throw error
        }
        if repair.asideIsLink, repair.asideName != nil, state.size > readLength {
            POSIXFile.cut(state.fd, to: readLength, path: path)  // the copy holds what was found, no more
        }
        close(&state)
        // An item appended again meanwhile moved to the end: then the queue says the order.
        let inOrder =
            Set(appendedSince.map(\.id)).count == appendedSince.count
            && !appendedSince.contains { repair.events.contains($0.id) }
        state.events = repair.events
        repair.events = QueuedEvents()  // the state's queue is the only reference: appended in place
        for event in appendedSince { state.events.append(event) }
        state.size = repair.size + tailLength
        state.recordLines = repair.recordLines + appendedSince.count
        state.next = .sound
        // Should this fail, the journal is closed; the next change re-opens it by reading it whole.
        state.fd = (try? POSIXFile.openForAppending(path)) ?? -1
        return inOrder
    }

    /// Undoes a prepared repair that will not be published: its temporary file and the copy it set
    /// aside go (a second name of the journal would make the next open refuse it, <doc:Behaviour#P7>).
    func discard(_ repair: PreparedRepair) {
        POSIXFile.delete(repair.temporary)
        if let asideName = repair.asideName { POSIXFile.delete(directory.path(of: asideName)) }
    }

    /// Keeps the damaged journal aside and writes a clean one with the readable items; returns
    /// `false` when the rewrite failed (the damaged file then stays in use: its bad lines are
    /// skipped again next time).
    private func rebuild(_ state: inout JournalState, skipping unreadable: Int, original: Data?) -> Bool {
        let asideName = directory.setAside(Self.fileName, keepingOriginal: true, contents: original)
        let disposal = asideName.map { "a copy was set aside as \($0)" } ?? "no copy could be kept"
        do {
            try compact(&state)
        } catch {
            // The damaged file stays in use: its second name (a hard link when no `original` was
            // given) goes, or the next start would refuse a file with two names (see Behaviour P7).
            if original == nil, let asideName { POSIXFile.delete(directory.path(of: asideName)) }
            diagnostics.log(.error, "Skipped \(unreadable) unreadable records of the event queue; rewriting it failed: \(error)")
            return false
        }
        diagnostics.log(.warning, "Skipped \(unreadable) unreadable records of the event queue; \(disposal) and the queue was rewritten")
        return true
    }

    /// Appends one line, after what ``JournalState/next`` asks for, in one `write`. With `durable`,
    /// it is synced before returning. On failure the file is cut back to its sound length and
    /// closed, so the next call re-opens it.
    ///
    /// Nothing is written that the reader would refuse (<doc:Behaviour#E6>, <doc:Behaviour#P7>): a
    /// line longer than ``JournalReplay/maximumLineLength`` (an append: ``maximumAppendLineLength``)
    /// throws ``SegmentsError`` `.storage` before anything is written, and so does an append that
    /// would take the file past ``POSIXFile/journalAppendLimit`` (compacting first, when the queue is
    /// loaded and holds dead lines, may make room: see ``wouldPassCap(_:adding:limit:)``); an update or remove past
    /// ``POSIXFile/maximumJournalSize`` also throws, which the store avoids by compacting instead.
    func write(_ entry: JournalEntry, to state: inout JournalState, durable: Bool) throws {
        try write(entry.op, to: &state, durable: durable) { try JournalLineWriter.write(entry, to: &$0) }
    }

    /// Appends the line adding `event`, as ``write(_:to:durable:)`` writes `.append(event)` without
    /// syncing, written from the item itself (the append on the caller's thread, <doc:Behaviour#R2>).
    func append(_ event: TrackedEvent, to state: inout JournalState) throws {
        try write(.append, to: &state, durable: false) { try JournalLineWriter.writeAppend(of: event, to: &$0) }
    }

    /// Writes the line `writeLine` makes, for an entry of operation `op` (see ``write(_:to:durable:)``).
    private func write(
        _ op: JournalEntry.Operation, to state: inout JournalState, durable: Bool, line writeLine: (inout LineBytes) throws -> Void
    ) throws {
        let start = state.next
        // One buffer for what must come first and the line, which becomes the `Data` written.
        var buffer = LineBytes()
        if start != .sound { start.bytes.withUnsafeBytes { buffer.append($0) } }
        let lineStart = buffer.count
        try writeLine(&buffer)
        let lineLength = buffer.count - lineStart
        let lineLimit = op == .append ? Self.maximumAppendLineLength : JournalReplay.maximumLineLength
        if lineLength - 1 > lineLimit {
            throw SegmentsError(
                .storage,
                "The item is too large to queue: its record would take \((lineLength - 1) >> 10) KiB, more than the "
                    + "\(JournalReplay.maximumLineLength >> 10) KiB a record may take to be read back at the next start "
                    + "(its properties, event type and customer ids together); the item was not queued")
        }
        let bytes = buffer.data()
        let limit = op == .append ? POSIXFile.journalAppendLimit : POSIXFile.maximumJournalSize
        if Self.wouldPassCap(state, adding: bytes.count, limit: limit) {
            throw SegmentsError(
                .storage,
                "The event queue file is full (\(POSIXFile.maximumJournalSize >> 20) MiB, the most that is read back at the next start); "
                    + "the item was not queued. Flush the queue, or track smaller events")
        }
        try write(bytes, to: &state, durable: durable)
        state.recordLines += 1 + start.recordLines
    }

    /// The longest append line written, newline excluded: 16 bytes short of what the reader takes,
    /// so the item's later update lines, whose attempt count grows by a digit or two, are
    /// written too.
    static let maximumAppendLineLength = JournalReplay.maximumLineLength - 16

    /// Whether writing `count` more bytes would take the file past `limit`.
    static func wouldPassCap(_ state: JournalState, adding count: Int, limit: Int) -> Bool {
        count > limit - state.size
    }

    /// Writes the header alone, when the file is still empty (see ``JournalState/Start/header``).
    func writeHeaderIfEmpty(_ state: inout JournalState) throws {
        guard state.next == .header, state.size == 0 else { return }
        try write(JournalHeader.line, to: &state, durable: false)
    }

    private func write(_ bytes: Data, to state: inout JournalState, durable: Bool) throws {
        do {
            try POSIXFile.writeAll(state.fd, bytes, path: path)
            if durable { try POSIXFile.sync(state.fd, path: path) }
        } catch {
            POSIXFile.cut(state.fd, to: state.size, path: path)
            close(&state)
            throw error
        }
        state.size += bytes.count
        state.next = .sound
    }

    /// Whether compaction is due: the dead lines are both many and at least as many as the live
    /// ones, so the rewrite (linear in the queue) happens at most once per as many changes:
    /// amortised O(1).
    static func compactionIsDue(_ state: JournalState) -> Bool {
        state.deadLines >= minimumDeadLinesToCompact && state.deadLines >= state.events.count
    }

    /// Compacts under the caller's lock when due (used while opening). A failed compaction is only
    /// logged: the current file is still correct, just longer.
    func compactIfWorthwhile(_ state: inout JournalState) {
        guard Self.compactionIsDue(state) else { return }
        do {
            try compact(&state)
        } catch {
            diagnostics.log(.warning, "Compacting the event queue failed, will retry later: \(error)")
        }
    }

    /// A compaction's expensive half, run without the store's lock: the live items of `snapshot`
    /// (taken under the lock) written and synced to a temporary file. Returns its path and length.
    func writeCompacted(_ events: [TrackedEvent]) throws -> (path: String, size: Int, lines: Int) {
        var data = JournalHeader.line
        for event in events { data.append(try JournalEntry.append(event).line()) }
        return (try directory.writeTemporary(for: Self.fileName, data), data.count, events.count)
    }

    /// A compaction's short half, under the store's lock: the lines written to the journal since
    /// the snapshot (at `snapshotSize`) are copied to the end of the temporary file, which then
    /// replaces the journal and is opened for appending. Returns `false` (and deletes the
    /// temporary file) when the journal changed under it in another way (re-opened, closed).
    func publishCompacted(
        _ compacted: (path: String, size: Int, lines: Int), snapshotSize: Int, generation: Int,
        into state: inout JournalState
    ) throws -> Bool {
        guard state.isOpen, state.generation == generation, state.size >= snapshotSize else {
            POSIXFile.delete(compacted.path)
            return false
        }
        let tail = try POSIXFile.bytes(of: path, in: snapshotSize..<state.size)
        if !tail.isEmpty {
            let fd = try POSIXFile.openForAppending(compacted.path)
            defer { POSIXFile.closeQuietly(fd) }
            try POSIXFile.writeAll(fd, tail, path: compacted.path)
        }
        try directory.publish(compacted.path, as: Self.fileName)
        close(&state)
        state.fd = try POSIXFile.openForAppending(path)
        state.next = .sound
        state.size = compacted.size + tail.count
        state.recordLines = compacted.lines + tail.filter { $0 == JournalReplay.newline }.count
        return true
    }

    /// Rewrites the file atomically with one `append` line per queued item, oldest first, and
    /// re-opens it for appending.
    func compact(_ state: inout JournalState) throws {
        var data = JournalHeader.line
        for event in state.events.ordered {
            data.append(try JournalEntry.append(event).line())
        }
        try directory.replace(Self.fileName, with: data)
        close(&state)
        state.fd = try POSIXFile.openForAppending(path)
        state.next = .sound
        state.size = data.count
        state.recordLines = state.events.count
    }

    /// Closes the descriptor, if open.
    func close(_ state: inout JournalState) {
        POSIXFile.closeQuietly(state.fd)
        state.fd = -1
        state.generation += 1
    }
}
