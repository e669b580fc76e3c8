import Foundation
import SegmentsDomain

extension SegmentationEngine {
    /// Answers the segments of `category` for the current customer, exactly once, on the delivery
    /// queue (SPEC G1–G6).
    ///
    /// Without `force`, a baseline of exactly this customer younger than the cache time answers at
    /// once. Otherwise the read joins the fetch in flight or starts one; the fetch updates the
    /// baseline and tells listeners about changes like any reload. Before configuration the read
    /// waits; after ``stop()`` it fails with `.stopped`.
    public func getSegments(
        category: SegmentCategory, force: Bool = false,
        completion: @escaping @Sendable (Result<[Segment], SegmentsError>) -> Void
    ) {
        startRead(category: category, force: force, completion: completion)
    }

    /// The `async` form of ``getSegments(category:force:completion:)``: throws ``SegmentsError``.
    ///
    /// Cancelling the calling task withdraws the read at once: it throws `.cancelled` (still
    /// exactly one answer), and a fetch it started goes on for the other readers and listeners.
    public func getSegments(category: SegmentCategory, force: Bool = false) async throws -> [Segment] {
        let readId = Locked<Int?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let id = startRead(category: category, force: force) { continuation.resume(with: $0) }
                readId.withLock { $0 = id }
                // Cancelled before the read existed: the handler below found nothing to withdraw.
                if Task.isCancelled { withdrawRead(id) }
            }
        } onCancel: {
            if let id = readId.value { withdrawRead(id) }
        }
    }

    /// Registers a read and serves it; returns its id.
    @discardableResult
    private func startRead(
        category: SegmentCategory, force: Bool,
        completion: @escaping @Sendable (Result<[Segment], SegmentsError>) -> Void
    ) -> Int {
        mutate { state, effects in
            state.nextReadId += 1
            let read = EngineState.PendingRead(
                id: state.nextReadId, category: category, force: force, completion: completion)
            switch state.phase {
            case .unconfigured:
                state.reads.append(read)
            case .stopped:
                answer(read, with: .failure(SegmentsError(.stopped, "the integration was stopped")))
            case .running:
                serve(read, &state, &effects)
            }
            return read.id
        }
    }

    /// Answers a still-pending read with `.cancelled`; a read already answered is left alone, so
    /// every read is answered exactly once.
    private func withdrawRead(_ id: Int) {
        mutate { state, _ in
            guard let index = state.reads.firstIndex(where: { $0.id == id }) else { return }
            answer(state.reads.remove(at: index), with: .failure(SegmentsError(.cancelled, "the read was cancelled")))
        }
    }

    /// Answers from the cache when allowed, otherwise queues the read on a flight.
    func serve(_ read: EngineState.PendingRead, _ state: inout EngineState, _ effects: inout EngineEffects) {
        if !read.force, let customer = state.customer,
            dependencies.timings.cache.canAnswer(from: state.baseline.snapshot, for: customer, at: now),
            let snapshot = state.baseline.snapshot
        {
            answer(read, with: .success(snapshot.segments(in: read.category)))
            return
        }
        state.reads.append(read)
        if state.flight == nil { startFlight(automatic: false, &state, &effects) }
    }
}
