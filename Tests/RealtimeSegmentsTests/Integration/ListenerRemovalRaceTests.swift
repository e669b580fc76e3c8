import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Behaviour D7 under real threads: listeners really are called while other threads remove them,
/// and once a removal has returned no call of that listener's handler starts.
///
/// One real client (live scheduler, its own serial delivery queue, in-memory storage, a fake
/// repository whose answer changes every round so every round delivers to every listener).
/// What "after" can mean here: a gate admits a call, then calls the handler. A delivery thread
/// preempted between the two while a removal runs to its end starts the handler after the removal
/// returned, though the call was admitted before — no gate that never waits can prevent that, and
/// it looks exactly like a widened window. So each late start is checked against the delivery
/// thread's involuntary context switches (Linux `RUSAGE_THREAD`) since the previous handler ended,
/// and against the removal that returned first: whether it had to sleep for a lock (a voluntary
/// switch of the remover's thread) — the gate's lock held by the very check that admitted the
/// call, whose release then wakes the remover in the middle of that window. A late start with
/// neither is a fault of the delivery path (a sleep or slow code between check and call) and fails
/// the test; one with either is counted and must stay rare.
/// Where the count is not available (Apple platforms) no late start is explained this way. Either
/// way a few unexplained ones are tolerated (``unexplainedLateStarts``, 0.5 % of the raced removals).
///
/// Every listener has a watch of its own: its handler's first step is to count the call and note
/// whether a removal of it had returned by then; each removal marks the watch once it returned.
/// (One lock per listener, taken only by its handler and its removers: a handler that had to wait
/// for the lock found it held by a remover whose removal had already returned, so the wait cannot
/// make a call that started in time look late. A global lock could: a handler queued behind other
/// listeners' bookkeeping would be recorded after a removal it preceded.)
///
/// Each round registers, in this order: a trigger, 8 "handshake" victims, then 60 pairs of
/// (keeper, victim). A forced read fetches the round's new answer, so one fan-out to all of them is
/// decided and queued. Then:
/// - the trigger's handler (first in registration order) hands the 8 handshake victims to two
///   remover threads and waits (bounded) until they are removed: these removals happen after
///   their calls were decided and before their gates are checked — racing the delivery every
///   time, by construction;
/// - each keeper's handler hands the victim registered right after it to the removers and
///   returns: the removers race the delivery queue to that victim's gate, so a removal often lands
///   between a gate's check and its call (the window a widened check-to-call gap would expose).
/// Both removers remove every victim (the same tokens, from two threads at once).
@Suite(Hang.timeLimit(minutes: 3), .onDedicatedThread) struct ListenerRemovalRaceTests {
    static let rounds = 100
    /// How long a forced read may take to be answered before the test gives up (times
    /// `Hang.timeScale`). Its fetch is a task of the cooperative pool, where every other suite's
    /// work waits its turn: under ThreadSanitizer that took more than 30 s, and in a plain run on a
    /// shared CI machine more than 90 s.
    static let answerPatience = Hang.scaled(150)

    /// How long a remover waits for its next work: a round's forced read first, then every removal
    /// of that round. A remover that waited only a minute gave up on a loaded CI machine while round
    /// 0's read was still waiting for the pool (the handshake then found no one to remove its victims).
    static let removerPatience = answerPatience + Hang.scaled(60)

    /// How long the test waits for the removers, which run on threads of their own, to finish a step.
    static let removalPatience = Hang.scaled(30)
    static let handshakeVictims = 8
    static let pairs = 60
    static let removers = 2
    /// Late starts no preemption explains that are tolerated (see the D7 check below): 0.5 % of the
    /// raced removals. A virtual machine's CPU can be taken away without any switch `getrusage`
    /// counts (steal time): a run under AddressSanitizer with five builds beside it on two cores
    /// showed 10, a quiet run 0 to 3; a 10 µs sleep between the gate's check and the call shows
    /// 2,000 to 3,000.
    static let unexplainedLateStarts = rounds * pairs / 200

    /// One listener's calls and removals.
    final class Watch: Sendable {
        struct State: Sendable {
            var removed = false
            var starts = 0
            var startsAfterRemoval = 0
            var preemptedLateStarts = 0
            var firstRemovalSlept = false
            var told: [[Segment]] = []
        }
        let state = Locked(State())

        /// A handler's first step: whether a removal of it had returned, and whether it slept.
        func started(with segments: [Segment]) -> (late: Bool, removalSlept: Bool) {
            state.withLock { state in
                state.starts += 1
                if state.removed { state.startsAfterRemoval += 1 }
                state.told.append(segments)
                return (state.removed, state.firstRemovalSlept)
            }
        }

        /// A late start the delivery thread was preempted before, or whose first removal slept for a lock.
        func excuse() { state.withLock { $0.preemptedLateStarts += 1 } }

        /// Right after `removeListener` returned; `slept`: the removal waited for a lock.
        func removalReturned(slept: Bool = false) {
            state.withLock { state in
                if !state.removed { state.firstRemovalSlept = slept }
                state.removed = true
            }
        }
    }

    /// The calling thread's involuntary and voluntary context switches so far; `nil` where unknown.
    static func contextSwitches() -> (involuntary: Int, voluntary: Int)? {
        #if os(Linux)
            var usage = rusage()
            guard getrusage(1 /* RUSAGE_THREAD: this thread only */, &usage) == 0 else { return nil }
            return (usage.ru_nivcsw, usage.ru_nvcsw)
        #else
            return nil
        #endif
    }

    /// When removals returned, against the rounds' start and end, from one counter.
    final class Timeline: Sendable {
        private let state = Locked((sequence: 0, firstRemovalReturn: [Int: Int]()))

        func removalReturned(_ listener: Int) {
            state.withLock { state in
                state.sequence += 1
                if state.firstRemovalReturn[listener] == nil { state.firstRemovalReturn[listener] = state.sequence }
            }
        }

        /// A point in the sequence (a round's start or end).
        func mark() -> Int {
            state.withLock { state in
                state.sequence += 1
                return state.sequence
            }
        }

        var firstRemovalReturn: [Int: Int] { state.withLock { $0.firstRemovalReturn } }
    }

    /// Listeners handed to the removers; each remover keeps its own cursor, so both remove each one.
    final class RemovalQueue: Sendable {
        enum Item: Sendable {
            case remove(listener: Int, ListenerToken, Watch)
            /// Signalled by each remover once it reached this point.
            case checkpoint(DispatchSemaphore)
            case stop
        }
        private let items = Locked<[Item]>([])
        let wakeUps = (0..<ListenerRemovalRaceTests.removers).map { _ in DispatchSemaphore(value: 0) }

        func hand(_ new: [Item]) {
            items.withLock { $0.append(contentsOf: new) }
            for wakeUp in wakeUps { wakeUp.signal() }
        }

        /// The items from `cursor` on.
        func items(from cursor: Int) -> [Item] {
            items.withLock { Array($0[cursor...]) }
        }
    }

    struct Outcome: Sendable {
        var failure: String?
        var keeperIDs: [[Int]] = []
        var handshakeIDs: [[Int]] = []
        var victimIDs: [[Int]] = []
        var roundSpans: [ClosedRange<Int>] = []
        var watches: [Int: Watch] = [:]
    }

    @Test func d7_listenersAreCalledWhileOtherThreadsRemoveThemAndNoCallStartsAfterARemovalReturned() async throws {
        let repository = RecordingSegmentRepository()
        let client = SegmentsClient(
            options: .init(
                runtime: SegmentsRuntime(
                    logger: RecordingLogger(level: .none), deliveryQueue: DispatchQueue(label: "removal-race.delivery")),
                // No automatic reload: only the test's forced reads fetch, one per round.
                timings: SegmentationTimings(debounce: DebouncePolicy(delay: 300, maxWait: 300)),
                storage: .inMemory))
        try client.configure(.init(backend: .custom(id: "removal-race", repository: repository, uploader: RecordingEventUploader())))
        defer { client.stop() }

        let timeline = Timeline()
        let queue = RemovalQueue()
        let removersDone = DispatchSemaphore(value: 0)
        for remover in 0..<Self.removers {
            Thread.detachNewThread {
                var cursor = 0
                while true {
                    // Bounded: a remover that hears nothing for longer than a round may take gives up (the test fails below).
                    guard queue.wakeUps[remover].wait(timeout: .now() + Self.removerPatience) == .success else { break }
                    let items = queue.items(from: cursor)
                    cursor += items.count
                    var stopped = false
                    for item in items {
                        switch item {
                        case .remove(let listener, let token, let watch):
                            let before = Self.contextSwitches()
                            client.removeListener(token)
                            let after = Self.contextSwitches()
                            watch.removalReturned(slept: before.map { $0.voluntary } != after.map { $0.voluntary })
                            timeline.removalReturned(listener)
                        case .checkpoint(let semaphore):
                            semaphore.signal()
                        case .stop:
                            stopped = true
                        }
                    }
                    if stopped { break }
                }
                removersDone.signal()
            }
        }

        let outcome = await onDedicatedThread { () -> Outcome in
            var outcome = Outcome()
            var nextID = 0
            // The delivery thread's switch count when the last handler ended (only handlers touch it).
            let switchesAtLastEnd = Locked<Int?>(nil)
            func register(_ handler: @escaping @Sendable (Int, [Segment]) -> Void) -> (Int, ListenerToken, Watch) {
                let id = nextID
                nextID += 1
                let watch = Watch()
                outcome.watches[id] = watch
                let token = client.addListener(category: .discovery()) { segments in
                    let start = watch.started(with: segments)
                    if start.late {
                        let now = Self.contextSwitches()?.involuntary
                        let preempted = now != nil && switchesAtLastEnd.value != nil && now != switchesAtLastEnd.value
                        if preempted || start.removalSlept { watch.excuse() }
                    }
                    handler(id, segments)
                    let switches = Self.contextSwitches()?.involuntary
                    switchesAtLastEnd.withLock { $0 = switches }
                }
                return (id, token, watch)
            }
            for round in 0..<Self.rounds {
                let handshakeDone = DispatchSemaphore(value: 0)
                let handshakeFailed = Locked(false)
                // The victims' tokens are known only after they are registered, which is after the
                // trigger and the keepers that hand them over: the handlers read them from here.
                let handshake = Locked<[RemovalQueue.Item]>([])
                let pairedVictim = Locked<[Int: RemovalQueue.Item]>([:])

                let (triggerID, triggerToken, triggerWatch) = register { _, _ in
                    queue.hand(handshake.value + [.checkpoint(handshakeDone)])
                    // On the delivery queue: the victims' calls are queued behind this one.
                    if handshakeDone.wait(timeout: .now() + Self.removalPatience) != .success { handshakeFailed.withLock { $0 = true } }
                }
                var handshakeIDs: [Int] = []
                for _ in 0..<Self.handshakeVictims {
                    let (id, token, watch) = register { _, _ in }
                    handshakeIDs.append(id)
                    handshake.withLock { $0.append(.remove(listener: id, token, watch)) }
                }
                var keeperIDs: [Int] = [triggerID]
                var keeperTokens: [(ListenerToken, Watch)] = [(triggerToken, triggerWatch)]
                var victimIDs: [Int] = []
                for _ in 0..<Self.pairs {
                    let (keeperID, keeperToken, keeperWatch) = register { keeper, _ in
                        if let victim = pairedVictim.withLock({ $0[keeper] }) { queue.hand([victim]) }
                    }
                    let (victimID, victimToken, victimWatch) = register { _, _ in }
                    pairedVictim.withLock { $0[keeperID] = .remove(listener: victimID, victimToken, victimWatch) }
                    keeperIDs.append(keeperID)
                    keeperTokens.append((keeperToken, keeperWatch))
                    victimIDs.append(victimID)
                }

                // A new answer: the forced read's fetch decides one fan-out to every listener. Its
                // completion is queued on the delivery queue after the listener calls (Behaviour G4).
                repository.answer([.discovery(): [Segment(id: "round-\(round)", segmentationId: "race")]])
                let roundStart = timeline.mark()
                let answered = DispatchSemaphore(value: 0)
                client.getSegments(force: true, category: .discovery()) { _ in answered.signal() }
                guard answered.wait(timeout: .now() + Self.answerPatience) == .success else {
                    outcome.failure = "round \(round): the forced read was not answered within \(Int(Self.answerPatience)) s"
                    return outcome
                }
                guard !handshakeFailed.value else {
                    outcome.failure = "round \(round): the removers did not remove the handshake victims within \(Int(Self.removalPatience)) s"
                    return outcome
                }
                // Every victim was handed over by now (its keeper ran); wait until both removers are done.
                let roundDone = DispatchSemaphore(value: 0)
                queue.hand([.checkpoint(roundDone)])
                for _ in 0..<Self.removers where roundDone.wait(timeout: .now() + Self.removalPatience) != .success {
                    outcome.failure = "round \(round): the removers did not finish within \(Int(Self.removalPatience)) s"
                    return outcome
                }
                let roundEnd = timeline.mark()
                // The keepers go quietly, between rounds: the next round's fan-out must not call them.
                for (id, (token, watch)) in zip(keeperIDs, keeperTokens) {
                    client.removeListener(token)
                    watch.removalReturned()
                    timeline.removalReturned(id)
                }
                outcome.keeperIDs.append(keeperIDs)
                outcome.handshakeIDs.append(handshakeIDs)
                outcome.victimIDs.append(victimIDs)
                outcome.roundSpans.append(roundStart...roundEnd)
            }
            // One more change with only a fresh listener: it is told, and no removed one is.
            let (lastID, lastToken, lastWatch) = register { _, _ in }
            repository.answer([.discovery(): [Segment(id: "after", segmentationId: "race")]])
            let answered = DispatchSemaphore(value: 0)
            client.getSegments(force: true, category: .discovery()) { _ in answered.signal() }
            if answered.wait(timeout: .now() + Self.answerPatience) != .success { outcome.failure = "the last forced read was not answered" }
            client.removeListener(lastToken)
            lastWatch.removalReturned()
            timeline.removalReturned(lastID)
            outcome.keeperIDs.append([lastID])
            return outcome
        }
        queue.hand([.stop])
        for _ in 0..<Self.removers { #expect(await signalled(removersDone)) }
        if let failure = outcome.failure { Issue.record(Comment(rawValue: failure)) }
        try #require(outcome.failure == nil)

        let watches = outcome.watches.mapValues { $0.state.value }
        let removedAt = timeline.firstRemovalReturn
        #expect(removedAt.count == watches.count, "every listener was removed")
        // D7: per listener, no handler start after a removal of it returned. The handshake victims
        // are exact (checked below: never called). Among the raced ones, a start can still be seen late without a switch `getrusage` shows (a run
        // under ThreadSanitizer, where the window between admission and the handler's first step
        // is instrumented code, showed one in five runs; a loaded virtual machine more): up to
        // `Self.unexplainedLateStarts` (30) of about 6,000 raced removals are tolerated, while a
        // widened window (even a 10 µs sleep between check and call) shows thousands.
        let lateStarts = watches.filter { $0.value.startsAfterRemoval > $0.value.preemptedLateStarts }.keys.sorted()
        #expect(
            lateStarts.count <= Self.unexplainedLateStarts,
            "handlers started after their removal returned: \(lateStarts.count) \(lateStarts)")
        // Late starts explained by a preemption or a removal that slept: rare, or the check above
        // would excuse a broken gate on a busy machine.
        let preempted = watches.values.reduce(0) { $0 + $1.preemptedLateStarts }
        #expect(preempted <= Self.rounds * Self.pairs / 100)

        // Deliveries happened: every keeper was told its round's list exactly once.
        let keepersToldOtherwise = outcome.keeperIDs.enumerated().flatMap { round, keepers in
            let expected = round < Self.rounds ? "round-\(round)" : "after"
            return keepers.filter { watches[$0]?.told.map { $0.map(\.id) } != [[expected]] }
        }
        #expect(keepersToldOtherwise.isEmpty, "keepers not told their round's list exactly once: \(keepersToldOtherwise)")
        let handlerCalls = watches.values.reduce(0) { $0 + $1.starts }
        #expect(handlerCalls >= Self.rounds * (Self.pairs + 1) + 1)

        // Removals raced deliveries: every victim's removal returned after its round's fan-out was
        // decided and before the round ended; the handshake victims, removed while the fan-out was
        // under way, were never called.
        var racing = 0
        var victimsCalledFirst = 0
        for round in 0..<Self.rounds {
            let span = outcome.roundSpans[round]
            for victim in outcome.handshakeIDs[round] + outcome.victimIDs[round] {
                if let removed = removedAt[victim], span.contains(removed) { racing += 1 }
                if watches[victim]?.starts != 0 { victimsCalledFirst += 1 }
            }
        }
        let calledHandshakeVictims = outcome.handshakeIDs.joined().filter { watches[$0]?.starts != 0 }
        #expect(calledHandshakeVictims.isEmpty, "handshake victims called after their removal: \(calledHandshakeVictims)")
        #expect(racing == Self.rounds * (Self.handshakeVictims + Self.pairs))
        let blocked = racing - victimsCalledFirst
        #expect(blocked >= Self.rounds * Self.handshakeVictims)
        #expect(client.listenerCount == 0)
        print(
            "ListenerRemovalRaceTests: \(handlerCalls) handler calls, \(racing) removals racing a fan-out, "
                + "\(blocked) of them before the victim's call (the gate stopped it), \(victimsCalledFirst) after it, "
                + "\(preempted) late starts after a preemption or a removal that slept")
    }
}
