import Foundation
import SegmentsDomain

extension SegmentationEngine {
    /// Answers the segments of `category` for the current customer, exactly once, on the delivery
    /// queue (see Behaviour G1–G6).
    ///
    /// Without `force`, a baseline of exactly this customer younger than the cache time answers at
    /// once. Otherwise the read joins the fetch in flight or starts one; the fetch updates the
    /// baseline and tells listeners about changes like any reload. Before configuration the read
    /// waits (at most 1,000 reads wait; more fail with `.notConfigured`); after ``stop()`` it fails
    /// with `.stopped`.
    package func getSegments(
        force: Bool = false, category: SegmentCategory,
        completion: @escaping @Sendable (Result<[Segment], SegmentsError>) -> Void
    ) {
        let now = moment
        if let hit = cacheHit(category, force: force, at: now) {
            dependencies.runtime.deliveryQueue.async { completion(.success(hit)) }
            return
        }
        transition { $0.read(category, force: force, reply: .onDeliveryQueue(completion), at: now) }
    }

    /// The `async` form of ``getSegments(force:category:completion:)``: throws ``SegmentsError``.
    /// The awaiting task is resumed directly, without a hop through the delivery queue (see Behaviour G4).
    ///
    /// Cancelling the calling task withdraws the read at once: it throws `.cancelled` (still
    /// exactly one answer), and a fetch it started goes on for the other readers and listeners.
    package func getSegments(force: Bool = false, category: SegmentCategory) async throws -> [Segment] {
        let now = moment
        // A hit answers without suspending the task at all; a cancelled task takes the slow path,
        // which answers it with `.cancelled`.
        if !Task.isCancelled, let hit = cacheHit(category, force: force, at: now) { return hit }
        let readId = Locked<Int?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let id = transition {
                    $0.read(category, force: force, reply: .direct { continuation.resume(with: $0) }, at: now)
                }
                readId.withLock { $0 = id }
                // Cancelled before the read existed: the handler below found nothing to withdraw.
                if Task.isCancelled { withdrawRead(id) }
            }
        } onCancel: {
            if let id = readId.value { withdrawRead(id) }
        }
    }

    /// The answer of a read when the cache gives it right now: one look under the lock, no
    /// transition, nothing queued (see Behaviour G1, G4). `nil` with `force` or when the read must wait.
    private func cacheHit(_ category: SegmentCategory, force: Bool, at now: SegmentationStateMachine.Moment) -> [Segment]? {
        guard !force else { return nil }
        return read { $0.cacheHit(category, at: now) }
    }

    private func withdrawRead(_ id: Int) {
        transition { $0.withdrawRead(id) }
    }
}
