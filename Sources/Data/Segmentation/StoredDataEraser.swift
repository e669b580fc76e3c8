import Foundation
import SegmentsDomain

/// Deletes what a configuration stored, for a stop that deletes the stored data
/// (<doc:Behaviour#A3>): the customer, the baseline and link memory, and the queued items.
///
/// The engine decides when (after the stop's last flush, or at once when a `configure` on the same
/// storage comes first) and calls it on the client's storage queue, never under a lock, behind
/// every write the configuration queued before.
package protocol StoredDataEraser: Sendable {
    /// Deletes the customer, the baseline and link memory, and the queued items `queuedItems` —
    /// the ones the configuration's pipeline held when it stopped, uploaded or not. Items another
    /// configuration queued since are not among them and stay. Failures are logged, never thrown.
    func erase(queuedItems: [TrackedEvent.ID])
}

/// A completion the app gave to `stop`, `stopAndDeleteData` or `anonymize`: called once, on the
/// main queue (<doc:Behaviour#A3>, <doc:Behaviour#A5>).
package typealias LifecycleCompletion = @Sendable () -> Void
