import Foundation
import SegmentsDomain

/// Listeners, deliveries and one-shot reads (see Behaviour M4, T1, D4–D8, G1–G6).
extension SegmentationStateMachine {
    /// Registers a listener; when configured, requests a reload (see Behaviour T1).
    mutating func addListener(
        _ listener: SegmentListener, group: UUID?, owner: AnyObject?, at now: Moment
    ) -> (ListenerToken, Actions) {
        forgetTold(listeners.pruneReleasedOwners())
        let token = listeners.add(listener, group: group, owner: owner)
        var actions = Actions()
        if backend != nil {
            requestReload(at: now, &actions)
            warnIfTrackingNotImmediate(&actions)
        }
        return (token, actions)
    }

    /// Removes one registration; its gate is closed before this returns (see Behaviour D7).
    mutating func removeListener(_ token: ListenerToken) {
        if let emptied = listeners.remove(token) { forgetTold([emptied]) }
    }

    /// Removes every registration of `group`.
    mutating func removeListeners(group: UUID) {
        forgetTold(listeners.removeGroup(group))
    }

    /// Decides the handler calls for `changes` (see Behaviour D5–D7): every listener of a changed category,
    /// in registration order, gets its full list; when `firstLoad` is given, listeners still
    /// waiting for their first load (D6) get their category's list from it even if unchanged.
    mutating func deliver(_ changes: SegmentsByCategory, firstLoad: SegmentsByCategory?, _ actions: inout Actions) {
        var deliveries: [Delivery] = []
        for (category, segments) in changes.sorted(by: { $0.key.name < $1.key.name }) {
            let calls = listeners.deliveries(of: segments, to: category)
            guard !calls.isEmpty else { continue }
            deliveries += calls
            told[category] = segments.isEmpty ? nil : segments
        }
        if let firstLoad {
            let waiting = listeners.awaitingFirstLoadByCategory
            for (category, registrations) in waiting.sorted(by: { $0.key.name < $1.key.name })
            where changes[category] == nil {
                let segments = firstLoad[category] ?? []
                deliveries += registrations.map { $0.delivery(of: segments) }
                if !segments.isEmpty { told[category] = segments }
            }
            listeners.keepFirstLoadPromises()
        }
        if !deliveries.isEmpty { actions.append(.deliver(deliveries)) }
    }

    // MARK: - One-shot reads

    /// A one-shot read (see Behaviour G1–G4): waits before configuration, fails after stop, otherwise is
    /// served. Returns its id, for ``withdrawRead(_:)``.
    mutating func read(
        _ category: SegmentCategory, force: Bool, reply: ReadReply, at now: Moment
    ) -> (Int, Actions) {
        nextRead += 1
        let read = PendingRead(id: nextRead, category: category, force: force, reply: reply)
        var actions = Actions()
        switch phase {
        case .running where baselineLoad == nil:
            serve(read, at: now, &actions)
        case .unconfigured, .running:
            // Waits for configure, or for the baseline it loads (see Behaviour R3).
            if reads.count < Self.maxReadsWaitingForConfigure {
                reads.append(read)
            } else {
                let error = SegmentsError(
                    .notConfigured,
                    "too many reads wait for configure (\(Self.maxReadsWaitingForConfigure)); configure the client first")
                actions.append(.answer([read], .failure(error)))
            }
        case .stopped:
            actions.append(.answer([read], .failure(SegmentsError.stopped)))
        }
        return (read.id, actions)
    }

    /// Answers a still-pending read with `.cancelled`; a read already answered is left alone, so
    /// every read is answered exactly once.
    mutating func withdrawRead(_ id: Int) -> Actions {
        guard let index = reads.firstIndex(where: { $0.id == id }) else { return [] }
        return [.answer([reads.remove(at: index)], .failure(SegmentsError(.cancelled, "the read was cancelled")))]
    }

    /// Answers from the cache when allowed (G1), otherwise joins the flight or starts one (G2).
    mutating func serve(_ read: PendingRead, at now: Moment, _ actions: inout Actions) {
        if !read.force, let segments = cachedSegments(of: read.category, at: now) {
            actions.append(.answer([read], .success([read.category: segments])))
            return
        }
        reads.append(read)
        startFlight(carriesReload: false, retryAttempt: 0, &actions)
    }

    /// The baseline's list of `category` when it may answer a read now (see Behaviour G1, T10): it belongs
    /// to exactly the current customer and is younger than the cache time — measured on the
    /// monotonic clock for a fetch of this process, on its wall-clock `fetchedAt` for a loaded one.
    func cachedSegments(of category: SegmentCategory, at now: Moment) -> [Segment]? {
        guard let snapshot = baseline.snapshot, let customer else { return nil }
        let age = snapshotUptime.map { now.uptime - $0 } ?? now.wall.timeIntervalSince(snapshot.fetchedAt)
        guard timings.cache.canAnswer(from: snapshot, for: customer, age: age) else { return nil }
        return snapshot.segments(in: category)
    }

    /// The answer of a read without `force` when the cache gives it right now (configured, the
    /// baseline loaded, fresh for the current customer); `nil` when the read must be queued.
    func cacheHit(_ category: SegmentCategory, at now: Moment) -> [Segment]? {
        guard case .running = phase, baselineLoad == nil else { return nil }
        return cachedSegments(of: category, at: now)
    }

    /// Answers every pending read with `result`.
    mutating func answerReads(with result: Result<SegmentsByCategory, SegmentsError>, _ actions: inout Actions) {
        guard !reads.isEmpty else { return }
        actions.append(.answer(reads, result))
        reads = []
    }
}
