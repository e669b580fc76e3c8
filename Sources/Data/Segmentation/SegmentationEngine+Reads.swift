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
        mutate { state, effects in
            let read = EngineState.PendingRead(category: category, force: force, completion: completion)
            switch state.phase {
            case .unconfigured:
                state.reads.append(read)
            case .stopped:
                answer(read, with: .failure(SegmentsError(.stopped, "the integration was stopped")))
            case .running:
                serve(read, &state, &effects)
            }
        }
    }

    /// The `async` form of ``getSegments(category:force:completion:)``: throws ``SegmentsError``.
    public func getSegments(category: SegmentCategory, force: Bool = false) async throws -> [Segment] {
        try await withCheckedThrowingContinuation { continuation in
            getSegments(category: category, force: force) { continuation.resume(with: $0) }
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
