import Foundation
import SegmentsDomain

/// What every transition of a state machine receives from outside: the time on both clocks, read
/// once before the lock is taken, and backoff jitter, so transitions stay pure (<doc:Behaviour#T10>).
struct Moment: Sendable {
    /// The monotonic clock, for every duration (debounce, cache age, backoff).
    var uptime: TimeInterval
    /// The wall clock, for timestamps and a persisted `fetchedAt`.
    var wall: Date
    /// The jitter source, asked only by the transitions that back off: a system random number
    /// is a system call, which the other transitions (a cache hit, an append) should not pay.
    private let jitter: @Sendable () -> Double

    /// A moment whose jitter comes from `jitter`.
    init(uptime: TimeInterval, wall: Date, jitter: @escaping @Sendable () -> Double) {
        self.uptime = uptime
        self.wall = wall
        self.jitter = jitter
    }

    /// A moment with a fixed jitter value (tests, and transitions that read no time).
    init(uptime: TimeInterval, wall: Date, random: Double) {
        self.init(uptime: uptime, wall: wall, jitter: { random })
    }

    /// A value in `0..<1` for backoff jitter.
    var random: Double { jitter() }
}

/// Identifies one timer a machine asked for; a timer that fires after the machine replaced it
/// finds no match and does nothing.
struct TimerID: Hashable, Sendable {
    let rawValue: Int
}

/// What a transition decided, in order: the machine's own actions, timers, and the objects it
/// let go of.
enum Step<Action: Sendable>: Sendable {
    /// One of the machine's actions.
    case perform(Action)
    /// Start a timer; when it fires the machine gets `timerFired`.
    case scheduleTimer(TimerID, after: TimeInterval)
    /// Withdraw a timer.
    case cancelTimer(TimerID)
    /// Values the transition dropped that may hold an app's objects (a handler closure, a
    /// replaced backend or store): released only after the lock is (<doc:Behaviour#D7>), so an
    /// app's `deinit` that calls the SDK cannot deadlock it.
    case release(any Sendable)
}

/// The steps of one transition, in order. Most transitions decide none or one, so the first is
/// stored inline and only a second one allocates.
struct Steps<Action: Sendable>: Sequence, Sendable {
    private var first: Step<Action>?
    private var rest: [Step<Action>] = []

    /// No steps.
    init() {}

    /// Whether the transition decided nothing.
    var isEmpty: Bool { first == nil }

    /// Appends one of the machine's actions.
    mutating func append(_ action: Action) { append(step: .perform(action)) }
    /// Starts a timer.
    mutating func schedule(_ timer: TimerID, after delay: TimeInterval) { append(step: .scheduleTimer(timer, after: delay)) }
    /// Withdraws a timer.
    mutating func cancel(_ timer: TimerID) { append(step: .cancelTimer(timer)) }
    /// Lets `value` go once the lock is released (<doc:Behaviour#D7>).
    mutating func release(_ value: any Sendable) { append(step: .release(value)) }

    mutating func append(step: Step<Action>) {
        if first == nil { first = step } else { rest.append(step) }
    }

    func makeIterator() -> Iterator { Iterator(first: first, rest: rest) }

    /// The first step, then the rest.
    struct Iterator: IteratorProtocol {
        fileprivate var first: Step<Action>?
        fileprivate let rest: [Step<Action>]
        fileprivate var index = 0

        mutating func next() -> Step<Action>? {
            if let step = first {
                first = nil
                return step
            }
            guard index < rest.count else { return nil }
            defer { index += 1 }
            return rest[index]
        }
    }
}

/// A state machine the driver can run: its transitions are `mutating` functions returning
/// ``Steps``; the one the driver itself calls is the timer's.
protocol DrivenStateMachine: Sendable {
    associatedtype Action: Sendable
    /// A timer the machine asked for fired. A timer the machine no longer waits for does nothing.
    mutating func timerFired(_ timer: TimerID, at now: Moment) -> Steps<Action>
}

/// Runs one state machine: each transition under one lock, everything it decided after the lock
/// is released, in the order it was decided, by one thread at a time (<doc:Behaviour#D7>,
/// <doc:Behaviour#A4>).
///
/// Both the segmentation engine and the tracking pipeline are this driver plus a function that
/// carries out their machine's actions. The driver owns what is the same for both: the lock, the
/// ordered outbox (a thread that finds another one draining leaves its steps to it, so steps keep
/// the order of the state changes that decided them, with no exception; what a call must have
/// done before it returns is the transition's result, which the caller carries out), the timers (scheduled through the runtime's
/// ``SegmentsScheduler``, their tokens kept while they may still be cancelled), the time and jitter handed
/// to every transition, and releasing what a transition dropped outside the lock. Nothing the
/// SDK does not own — an app's handler, a store, a logger, a scheduler, a repository — runs
/// while the lock is held.
final class StateMachineDriver<Machine: DrivenStateMachine>: Sendable {
    typealias Perform = @Sendable (Machine.Action, StateMachineDriver<Machine>) -> Void

    /// Where a timer is: being handed to the scheduler, scheduled (its token kept for a cancel), or
    /// fired while it was being handed over (its token is then dropped when it arrives). A timer
    /// that fired or was cancelled has no slot.
    private enum TimerSlot: Sendable {
        case scheduling
        case scheduled(ScheduledWork)
        case fired
    }

    private struct Core: Sendable {
        var machine: Machine
        var outbox: [Step<Machine.Action>] = []
        /// Whether some thread is carrying out the outbox; only that thread does, in order.
        var draining = false
        var timers: [TimerID: TimerSlot] = [:]
    }

    private let core: Locked<Core>
    private let runtime: SegmentsRuntime
    private let perform: Perform

    /// Drives `machine`; `perform` carries out one of its actions (outside the lock) and may run
    /// further transitions on the driver it is given.
    init(_ machine: Machine, runtime: SegmentsRuntime, perform: @escaping Perform) {
        core = Locked(Core(machine: machine))
        self.runtime = runtime
        self.perform = perform
    }

    /// The inputs of a transition, read before the lock is taken (the clock is a port).
    var now: Moment {
        Moment(uptime: runtime.clock.uptime(), wall: runtime.clock.now(), jitter: runtime.random)
    }

    /// Runs one transition under the lock at `now`, then carries out what it decided (and
    /// anything other threads decided meanwhile) outside the lock.
    @discardableResult
    func transition<Result>(
        at now: Moment? = nil, _ body: (inout Machine, Moment) -> (Result, Steps<Machine.Action>)
    ) -> Result {
        let moment = now ?? self.now
        let (result, mine) = core.withLock { core -> (Result, Steps<Machine.Action>?) in
            let (result, steps) = body(&core.machine, moment)
            guard !steps.isEmpty else { return (result, nil) }
            guard !core.draining else {
                // The draining thread carries them out, in order.
                for step in steps { core.outbox.append(step) }
                return (result, nil)
            }
            core.draining = true
            return (result, steps)  // nothing is queued before them: carried out here, first
        }
        if let mine {
            for step in mine { run(step) }
            drainOutbox()
        }
        return result
    }

    /// A transition without a result.
    func transition(at now: Moment? = nil, _ body: (inout Machine, Moment) -> Steps<Machine.Action>) {
        transition(at: now) { machine, now in ((), body(&machine, now)) }
    }

    /// A look at the machine under the lock; `body` must only read.
    func read<Result>(_ body: (Machine) -> Result) -> Result {
        core.withLock { body($0.machine) }
    }

    /// Carries out the outbox in order until it is empty, then gives up draining. Only the thread
    /// that set `draining` calls it; the batch is released after the lock.
    private func drainOutbox() {
        while true {
            let batch = core.withLock { core -> [Step<Machine.Action>] in
                if core.outbox.isEmpty { core.draining = false }
                defer { core.outbox = [] }
                return core.outbox
            }
            if batch.isEmpty { return }
            for step in batch { run(step) }
        }
    }

    private func run(_ step: Step<Machine.Action>) {
        switch step {
        case .perform(let action):
            perform(action, self)
        case .scheduleTimer(let timer, let delay):
            core.withLock { $0.timers[timer] = .scheduling }
            let work = runtime.scheduler.schedule(after: delay) { [weak self] in self?.fire(timer) }
            // Kept while it may be cancelled; one that already fired is not (its token goes here).
            core.withLock { core in
                if case .fired = core.timers[timer] {
                    core.timers[timer] = nil
                } else {
                    core.timers[timer] = .scheduled(work)
                }
            }
        case .cancelTimer(let timer):
            let slot = core.withLock { $0.timers.removeValue(forKey: timer) }
            if case .scheduled(let work) = slot { work.cancel() }
        case .release:
            break  // the value goes with the step, here, outside the lock
        }
    }

    private func fire(_ timer: TimerID) {
        let slot = core.withLock { core -> TimerSlot? in
            if case .scheduling = core.timers[timer] {
                core.timers[timer] = .fired  // its token is not kept yet: the keeper drops it
                return nil
            }
            return core.timers.removeValue(forKey: timer)  // nil: cancelled, and the machine ignores it
        }
        _ = slot  // the token is released here, outside the lock
        transition { $0.timerFired(timer, at: $1) }
    }
}
