import Foundation
import SegmentsDomain
import SegmentsData

extension Exponea {
    /// The serial queue on which ``shared`` calls listeners (``SegmentationManager/shared``'s
    /// callbacks) and completion handlers (<doc:Behaviour#D8>): by default a queue of its own,
    /// never the caller's thread. Choose `.main` in an app that updates its UI from those callbacks.
    ///
    /// The shared instance takes the queue when it is built, on the first use of `Exponea.shared`
    /// or `SegmentationManager.shared`, and keeps it for the life of the process. So set it first,
    /// before anything touches the shared instance, typically as the app launches:
    ///
    /// ```swift
    /// Exponea.sharedDeliveryQueue = .main
    /// Exponea.shared.configure(Exponea.ProjectSettings(projectToken: "TOKEN", authorization:
    /// .token("KEY")))
    /// ```
    ///
    /// Set later, it changes nothing and logs an error through ``logger``
    /// (`Segments: Exponea.sharedDeliveryQueue was set after the shared instance was built; …`);
    /// reading it always returns the queue the shared instance uses (or will use). Instances built with
    /// ``init(client:)`` use their client's ``SegmentsRuntime/deliveryQueue`` instead.
    ///
    /// It is ``sharedOptions``' `runtime.deliveryQueue`: setting either sets both.
    public static var sharedDeliveryQueue: DispatchQueue {
        get { sharedOptionsChoice.value.runtime.deliveryQueue }
        set {
            sharedOptionsChoice.update(lateChoice: """
                Segments: Exponea.sharedDeliveryQueue was set after the shared instance was built; it keeps \
                the queue it was built with. Set it before the first use of Exponea.shared or SegmentationManager.shared.
                """) { $0.runtime.deliveryQueue = newValue }
        }
    }
}

/// A setting that may be chosen until it is first used, and is fixed from then on: a later
/// choice is refused with an error log line, never silently dropped.
package final class ChosenUntilFirstUse<Value: Sendable>: Sendable {
    private let state: Locked<(value: Value, used: Bool)>
    private let logger: any SegmentsLogger
    private let lateChoice: String

    /// A setting holding `initial`; a choice after first use logs `lateChoice` as an error.
    package init(_ initial: Value, logger: any SegmentsLogger, lateChoice: String) {
        state = Locked((initial, false))
        self.logger = logger
        self.lateChoice = lateChoice
    }

    /// The value chosen, or in use once used.
    package var value: Value { state.value.value }

    /// Chooses `value` unless the setting was used; a late choice logs an error and returns `false`.
    @discardableResult
    package func set(_ value: Value) -> Bool {
        update { $0 = value }
    }

    /// Changes the value with `body`, in one step, unless the setting was used; a late change
    /// logs `lateChoice` (by default the setting's own line) as an error and returns `false`.
    @discardableResult
    package func update(lateChoice message: String? = nil, _ body: (inout Value) -> Void) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.used else { return false }
            body(&state.value)
            return true
        }
        if !accepted { logger.log(.error, message ?? lateChoice) }
        return accepted
    }

    /// The value, fixed from now on.
    package func use() -> Value {
        state.withLock { state in
            state.used = true
            return state.value
        }
    }
}
