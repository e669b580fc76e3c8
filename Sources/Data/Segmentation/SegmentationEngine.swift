import Foundation
import SegmentsDomain

/// The real-time segmentation core of one client: listeners, automatic reloads, change delivery
/// and one-shot reads (see Behaviour T, C, D, G, A).
///
/// Every decision is made by a value state machine (`SegmentationStateMachine`) held under one
/// lock, so the synchronous entry points (`addListener`, `removeListener`, the completion form of
/// `getSegments`) keep their call order from any thread. A transition returns actions; the engine
/// carries them out **after releasing the lock**, in the order they were decided (one ordered
/// outbox, drained by one thread at a time), so no handler, store, logger, scheduler or
/// repository ever runs under it. Every asynchronous step — debounce, backoff, each fetch — goes
/// through the injected ``Scheduler``, so tests drive the engine on virtual time. Deliveries run on
/// one serial delivery queue (see Behaviour D8); saves run on one serial storage queue, in order.
package final class SegmentationEngine: Sendable {
    /// The ports that live as long as the engine.
    package struct Dependencies: Sendable {
        /// Scheduler, clock, logger, delivery queue and jitter, shared with the rest of the client.
        package var runtime: SegmentsRuntime
        /// The serial queue every store load and save runs on, in order, off the caller's thread.
        package var storageQueue: DispatchQueue
        /// Every timing.
        package var timings: SegmentationTimings
        /// A new anonymous cookie.
        package var makeCookie: @Sendable () -> String

        /// Creates the dependencies; the defaults are the live ones.
        package init(
            runtime: SegmentsRuntime,
            storageQueue: DispatchQueue = DispatchQueue(label: "RealtimeSegments.storage"),
            timings: SegmentationTimings = SegmentationTimings(),
            makeCookie: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
        ) {
            self.runtime = runtime
            self.storageQueue = storageQueue
            self.timings = timings
            self.makeCookie = makeCookie
        }
    }

    /// The ports of one configured integration.
    package struct Ports: Sendable {
        /// Where segments come from.
        package var repository: any SegmentRepository
        /// The current customer's ids.
        package var customerStore: any CustomerStore
        /// The baseline and link memory.
        package var baselineStore: any SegmentBaselineStore

        /// Creates the ports of an integration.
        package init(
            repository: any SegmentRepository, customerStore: any CustomerStore,
            baselineStore: any SegmentBaselineStore
        ) {
            self.repository = repository
            self.customerStore = customerStore
            self.baselineStore = baselineStore
        }
    }

    /// The machine, the actions it decided that are not carried out yet, and the tokens of the
    /// timers that may still fire.
    struct Core: Sendable {
        var machine: SegmentationStateMachine
        var outbox: [SegmentationStateMachine.Action] = []
        /// Whether some thread is carrying out the outbox; only that thread does, in order.
        var draining = false
        var timers: [SegmentationStateMachine.TimerID: ScheduledWork] = [:]
        /// Customer saves queued on the storage queue and not yet written: while there are any,
        /// `configure` reads the customer on the storage queue, after them.
        var pendingCustomerSaves = 0
    }

    let dependencies: Dependencies
    let core: Locked<Core>

    /// An unconfigured engine: listeners and reads can be registered; they are served after
    /// ``configure(_:)``.
    package init(dependencies: Dependencies) {
        self.dependencies = dependencies
        core = Locked(Core(machine: SegmentationStateMachine(timings: dependencies.timings, random: dependencies.runtime.random)))
    }

    /// The current moment on both clocks, read before the lock is taken (the clock is a port).
    var moment: SegmentationStateMachine.Moment {
        SegmentationStateMachine.Moment(uptime: dependencies.runtime.clock.uptime(), wall: dependencies.runtime.clock.now())
    }

    /// Runs one transition under the lock, then carries out what it decided (and anything other
    /// threads decided meanwhile), outside the lock.
    @discardableResult
    func transition<Result>(
        _ body: (inout SegmentationStateMachine) -> (Result, SegmentationStateMachine.Actions)
    ) -> Result {
        let (result, mine) = core.withLock { core -> (Result, SegmentationStateMachine.Actions?) in
            let (result, actions) = body(&core.machine)
            guard !actions.isEmpty else { return (result, nil) }
            guard !core.draining else {
                core.outbox += actions  // the thread draining now carries them out, in order
                return (result, nil)
            }
            core.draining = true
            return (result, actions)  // nothing is queued before them: carried out here, first
        }
        if let mine {
            for action in mine { perform(action) }
            drainOutbox()
        }
        return result
    }

    /// A transition without a result.
    func transition(_ body: (inout SegmentationStateMachine) -> SegmentationStateMachine.Actions) {
        transition { machine in ((), body(&machine)) }
    }

    /// A read of the machine's state.
    func read<Result>(_ body: (SegmentationStateMachine) -> Result) -> Result {
        core.withLock { body($0.machine) }
    }

    /// Carries out the outbox in order until it is empty, then gives up draining. Actions that
    /// other threads (or the code called here) add meanwhile are carried out by this loop too,
    /// never concurrently. Only the thread that set `draining` calls it.
    private func drainOutbox() {
        while true {
            let batch = core.withLock { core -> [SegmentationStateMachine.Action] in
                if core.outbox.isEmpty { core.draining = false }
                defer { core.outbox = [] }
                return core.outbox
            }
            if batch.isEmpty { return }
            for action in batch { perform(action) }
        }
    }
}
