import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The tracking pipeline's state machine, driven directly: no scheduler, no queues, no driver.
/// Each row sets a machine up, applies one event, and checks the state it leaves (in words) and
/// the steps it returns, in order (see Behaviour E1–E5, R1, R3, A3).
@Suite(Hang.timeLimit(minutes: 1)) struct TrackingStateMachineTests {
    typealias Machine = TrackingStateMachine

    /// One row: a machine in some state, an event, the state it leaves and the steps it returns.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let setup: @Sendable () -> Machine
        let event: @Sendable (inout Machine) -> Steps<Machine.Action>
        let state: String
        let steps: [String]

        init(
            _ name: String, _ setup: @escaping @Sendable () -> Machine,
            _ event: @escaping @Sendable (inout Machine) -> Steps<Machine.Action>, state: String, steps: [String]
        ) {
            self.name = name
            self.setup = setup
            self.event = event
            self.state = state
            self.steps = steps
        }

        var testDescription: String { name }
    }

    // MARK: - Fixtures

    static let names = ["a", "b", "c", "s1", "s2", "bad", "good"]
    static let ids: [String: UUID] = Dictionary(uniqueKeysWithValues: names.enumerated().map { index, name in
        (name, UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", index + 1))!)
    })
    static let now = Moment(uptime: 0, wall: Date(timeIntervalSince1970: 1_700_000_000), random: 0.5)
    static let unavailable = SegmentsError(.httpStatus, "unavailable", httpStatus: 503)
    static let throttled = SegmentsError(.httpStatus, "slow down", httpStatus: 429, retryAfter: 120)
    static let unauthorized = SegmentsError(.unauthorized, "unauthorized", httpStatus: 401)
    static let rejected = SegmentsError(.httpStatus, "bad request", httpStatus: 400)

    /// The next pipeline on the same store, for a stop that hands its flushes over (never run).
    static let successor = TrackingPipeline(
        dependencies: .init(client: ClientPorts(runtime: SegmentsRuntime(scheduler: TestScheduler(), clock: TestScheduler(), logger: RecordingLogger()))),
        store: RecordingEventQueueStore(), uploader: UnimplementedEventUploader(), loadsAtOnce: false, onItemUploaded: {})

    static func item(_ name: String, failed: Int = 0) -> TrackedEvent {
        TrackedEvent(
            id: ids[name]!, kind: .event(type: name), customerIds: CustomerIds(cookie: "cookie"), properties: [:],
            timestamp: now.wall, failedAttempts: failed)
    }

    /// A machine whose stored queue is still loading.
    static func loading(_ mode: FlushingMode = .manual, capacity: Int = 100) -> Machine {
        Machine(mode: mode, limits: .init(capacity: capacity, retry: RetryBackoff(), maxPermanentFailures: 10))
    }

    /// A machine whose stored queue loaded `stored`.
    static func running(_ mode: FlushingMode = .manual, _ stored: [TrackedEvent] = [], capacity: Int = 100) -> Machine {
        var machine = loading(mode, capacity: capacity)
        _ = machine.loaded(stored)
        return machine
    }

    /// A running machine with a flush in progress on its oldest item, `waiters` waiting for it.
    static func flushing(_ mode: FlushingMode = .manual, _ stored: [TrackedEvent], waiters: Int = 1) -> Machine {
        var machine = running(mode, stored)
        for _ in 0..<waiters { _ = machine.flush { _ in } }
        return machine
    }

    /// An immediate-mode machine whose upload of `a` failed transiently: the queue waits for
    /// retry timer 1 (attempt 1).
    static func paused(_ stored: [TrackedEvent] = [item("a")]) -> Machine {
        var machine = running(.immediate, stored)
        _ = machine.uploadFailed(ids["a"]!, unavailable, at: now)
        return machine
    }

    /// A periodic machine (every 10 s) whose periodic flush of `a` failed with a 503 asking for
    /// 120 s: the queue waits for retry timer 3 (attempt 1); periodic timer 2 is armed.
    static func pausedPeriodic() -> Machine {
        var machine = running(.periodic(seconds: 10), [item("a")])
        _ = machine.timerFired(TimerID(rawValue: 1), at: now)
        _ = machine.uploadFailed(ids["a"]!, throttled, at: now)
        return machine
    }

    // MARK: - Describing

    static func name(_ id: UUID) -> String {
        ids.first { $0.value == id }?.key ?? id.uuidString
    }

    static func describe(_ failure: SegmentsError) -> String {
        failure.httpStatus.map(String.init) ?? failure.code.rawValue
    }

    /// The steps, in words.
    static func describe(_ steps: Steps<Machine.Action>) -> [String] {
        steps.map { step in
            switch step {
            case .scheduleTimer(let timer, let delay): "schedule(timer \(timer.rawValue), \(delay))"
            case .cancelTimer(let timer): "cancel(timer \(timer.rawValue))"
            case .release: "release"
            case .perform(let action):
                switch action {
                case .upload(let event): "upload(\(Machine.name(event)))"
                case .remove(let id): "remove(\(name(id)))"
                case .update(let event): "update(\(Machine.name(event)))"
                case .itemUploaded: "itemUploaded"
                case .completeFlushes(let waiters, .success(let count)): "complete(\(waiters.count), success(\(count)))"
                case .completeFlushes(let waiters, .failure(let error)): "complete(\(waiters.count), failure(\(describe(error))))"
                case .answerCounts(let waiters, let count): "count(\(waiters.count), \(count))"
                case .sync: "sync"
                case .settled(let waiters): "settled(\(waiters.count))"
                case .log(let level, _): "log(\(level))"
                case .finished(let waiters): "finished(\(waiters.count))"
                }
            }
        }
    }

    static func check(_ row: Row) {
        var machine = row.setup()
        let steps = row.event(&machine)
        #expect(machine.description == row.state, "\(row.name)")
        #expect(describe(steps) == row.steps, "\(row.name)")
    }

    // MARK: - Loading (R1, R3, E1)

    static let loadingRows: [Row] = [
        Row(
            "r3_e1_itemsTrackedWhileLoadingAreKeptInCallOrderWithOneSync", { loading() },
            { $0.tracked("a") + $0.tracked("b") + $0.tracked("c") },
            state: "loading(tracked: [a, b, c], flushes: 0, counts: 0)", steps: ["sync"]),
        Row(
            "r3_afterTheLoadTrackedItemsFollowTheStoredOnesWithoutDuplicates",
            {
                var machine = loading()
                _ = machine.tracked("a")
                _ = machine.tracked("s2")  // already in the file when the load read it
                return machine
            },
            { $0.loaded([item("s1"), item("s2")]) },
            state: "running(items: [s1, s2, a])", steps: []),
        Row(
            "r3_e5_aFlushWhileLoadingWaitsForTheLoad", { loading() }, { $0.flush { _ in }.1 },
            state: "loading(tracked: [], flushes: 1, counts: 0)", steps: []),
        Row(
            "r3_e5_flushesAskedForWhileLoadingBecomeOneFlushOnceLoaded",
            {
                var machine = loading()
                _ = machine.flush { _ in }
                _ = machine.flush { _ in }
                return machine
            },
            { $0.loaded([item("s1"), item("s2")]) },
            state: "running(items: [s1, s2], flush: s1 uploaded 0 waiters 2)", steps: ["upload(s1)"]),
        Row(
            "r3_e2_immediateModeUploadsTheStoredQueueOnceLoaded", { loading(.immediate) }, { $0.loaded([item("s1")]) },
            state: "running(items: [s1], flush: s1 uploaded 0 waiters 0)", steps: ["upload(s1)"]),
        Row(
            "r3_e2_aModeSetWhileLoadingAppliesOnceLoaded", { loading() },
            { $0.setMode(.periodic(seconds: 30)) + $0.loaded([]) },
            state: "running(items: [], periodic: timer 1)", steps: ["schedule(timer 1, 30.0)"]),
        Row(
            "r1_anExactCountWaitsForTheLoad",
            {
                var machine = loading()
                _ = machine.tracked("a")
                return machine
            },
            { $0.countWhenLoaded { _ in } },
            state: "loading(tracked: [a], flushes: 0, counts: 1)", steps: []),
        Row(
            "r1_r3_countsAskedForWhileLoadingAreAnsweredExactlyOnceLoaded",
            {
                var machine = loading()
                _ = machine.tracked("a")
                _ = machine.countWhenLoaded { _ in }
                return machine
            },
            { $0.loaded([item("s1"), item("s2")]) },
            state: "running(items: [s1, s2, a])", steps: ["count(1, 3)"]),
        Row(
            "r1_aCountWhenLoadedIsAnsweredAtOnce", { running(.manual, [item("s1")]) }, { $0.countWhenLoaded { _ in } },
            state: "running(items: [s1])", steps: ["count(1, 1)"]),
    ]

    @Test(arguments: loadingRows) func r3_loading(_ row: Row) {
        Self.check(row)
    }

    /// R1: the count from memory never waits: while loading it is what is known so far.
    @Test func r1_theCountFromMemoryIsWhatIsKnownSoFar() {
        var machine = Self.loading()
        _ = machine.tracked("a")
        #expect(machine.queuedCount == 1)
        _ = machine.loaded([Self.item("s1"), Self.item("s2")])
        #expect(machine.queuedCount == 3)
    }

    /// E6: at the cap an item is refused before it is written, appends still in flight counted.
    @Test func e6_atTheCapAnItemIsRefusedBeforeItIsWritten() throws {
        var machine = Self.running(.manual, [Self.item("s1")], capacity: 3)
        try machine.admit()  // written, not yet appended
        _ = machine.tracked("a")
        let error = #expect(throws: SegmentsError.self) { try machine.admit() }
        #expect(error?.code == .storage)
        _ = machine.appendFailed()
        try machine.admit()
    }

    // MARK: - Modes (E2)

    static let modeRows: [Row] = [
        Row(
            "e2_immediateModeUploadsOnAppend", { running(.immediate) }, { $0.tracked("a") },
            state: "running(items: [a], flush: a uploaded 0 waiters 0)", steps: ["sync", "upload(a)"]),
        Row(
            "e2_immediateModeWaitsForAPendingRetry", { paused() }, { $0.tracked("b") },
            state: "running(items: [a, b], retry: attempt 1 timer 1)", steps: ["sync"]),
        Row(
            "e2_e5_anAppendDuringAFlushIsLeftToIt", { flushing(.immediate, [item("a")], waiters: 0) }, { $0.tracked("b") },
            state: "running(items: [a, b], flush: a uploaded 0 waiters 0)", steps: ["sync"]),
        Row(
            "e2_manualModeOnlyQueues", { running(.manual) }, { $0.tracked("a") },
            state: "running(items: [a])", steps: ["sync"]),
        Row(
            "e2_periodicModeFlushesOnItsTimerAndReArmsIt", { running(.periodic(seconds: 10), [item("a")]) },
            { $0.timerFired(TimerID(rawValue: 1), at: now) },
            state: "running(items: [a], flush: a uploaded 0 waiters 0, periodic: timer 2)",
            steps: ["schedule(timer 2, 10.0)", "upload(a)"]),
        Row(
            "e2_periodicModeWithNothingQueuedOnlyReArms", { running(.periodic(seconds: 10)) },
            { $0.timerFired(TimerID(rawValue: 1), at: now) },
            state: "running(items: [], periodic: timer 2)", steps: ["schedule(timer 2, 10.0)"]),
        Row(
            "e2_settingThePeriodicModeAgainRestartsItsOnlyTimer", { running(.periodic(seconds: 10)) },
            { $0.setMode(.periodic(seconds: 10)) },
            state: "running(items: [], periodic: timer 2)", steps: ["cancel(timer 1)", "schedule(timer 2, 10.0)"]),
        Row(
            // The facade refuses NaN (E2); a NaN reaching the machine must not become a delay a
            // live scheduler runs at once, again and again (P7: never a busy loop).
            "e2_p7_aNaNPeriodReachingTheMachineWaitsOneSecondNotZero", { running(.manual) },
            { $0.setMode(.periodic(seconds: .nan)) },
            state: "running(items: [], periodic: timer 1)", steps: ["schedule(timer 1, 1.0)"]),
        Row(
            "e2_switchingToManualCancelsAPendingRetry", { paused() }, { $0.setMode(.manual) },
            state: "running(items: [a], retry: attempt 1)", steps: ["cancel(timer 1)"]),
        Row(
            "e2_switchingToManualEndsThePeriodicTimer", { running(.periodic(seconds: 10), [item("a")]) },
            { $0.setMode(.manual) },
            state: "running(items: [a])", steps: ["cancel(timer 1)"]),
        Row(
            "e2_switchingToImmediateUploadsWhatWaits", { running(.manual, [item("a")]) }, { $0.setMode(.immediate) },
            state: "running(items: [a], flush: a uploaded 0 waiters 0)", steps: ["upload(a)"]),
        Row(
            "e2_aRetryTimerEndsTheBackoffAndFlushes", { paused() }, { $0.timerFired(TimerID(rawValue: 1), at: now) },
            state: "running(items: [a], flush: a uploaded 0 waiters 0, retry: attempt 1)", steps: ["upload(a)"]),
        Row(
            "e2_aTimerTheMachineNoLongerWaitsForDoesNothing", { running(.periodic(seconds: 10), [item("a")]) },
            { $0.timerFired(TimerID(rawValue: 99), at: now) },
            state: "running(items: [a], periodic: timer 1)", steps: []),
        // A pending backoff (E3) is honoured by every trigger the app did not ask for: the
        // periodic timer only re-arms, resigning active does nothing; the retry timer ends it.
        Row(
            "e2_e3_thePeriodicTimerLeavesAPendingBackoffAloneAndReArms", { pausedPeriodic() },
            { $0.timerFired(TimerID(rawValue: 2), at: now) },
            state: "running(items: [a], retry: attempt 1 timer 3, periodic: timer 4)", steps: ["schedule(timer 4, 10.0)"]),
        Row(
            "e2_e3_resigningActiveLeavesAPendingBackoffAlone", { pausedPeriodic() }, { $0.appLeftForeground() },
            state: "running(items: [a], retry: attempt 1 timer 3, periodic: timer 2)", steps: []),
        Row(
            "e2_e3_inPeriodicModeTheRetryTimerEndsTheBackoffAndFlushes", { pausedPeriodic() },
            { $0.timerFired(TimerID(rawValue: 3), at: now) },
            state: "running(items: [a], flush: a uploaded 0 waiters 0, retry: attempt 1, periodic: timer 2)",
            steps: ["upload(a)"]),
        // What the app asks for is not held back by a backoff: its flush (E5), and the flush on
        // entering the background (E7: it may be the last chance before the app is suspended).
        Row(
            "e5_e3_theAppsFlushUploadsAtOnceDuringABackoff", { pausedPeriodic() }, { $0.flush { _ in }.1 },
            state: "running(items: [a], flush: a uploaded 0 waiters 1, retry: attempt 1 timer 3, periodic: timer 2)",
            steps: ["upload(a)"]),
        Row(
            "e7_e3_enteringTheBackgroundFlushesAtOnceDuringABackoff", { pausedPeriodic() },
            { $0.appEnteredBackground { _ in }.1 },
            state: "running(items: [a], flush: a uploaded 0 waiters 1, retry: attempt 1 timer 3, periodic: timer 2)",
            steps: ["upload(a)"]),
    ]

    @Test(arguments: modeRows) func e2_modes(_ row: Row) {
        Self.check(row)
    }

    // MARK: - Flushes (E5)

    static let flushRows: [Row] = [
        Row(
            "e5_aFlushStartsWithTheOldestItem", { running(.manual, [item("a"), item("b")]) }, { $0.flush { _ in }.1 },
            state: "running(items: [a, b], flush: a uploaded 0 waiters 1)", steps: ["upload(a)"]),
        Row(
            "e5_aFlushDuringAFlushJoinsIt", { flushing(.manual, [item("a"), item("b")]) }, { $0.flush { _ in }.1 },
            state: "running(items: [a, b], flush: a uploaded 0 waiters 2)", steps: []),
        Row(
            "e5_aFlushOfAnEmptyQueueIsAnsweredAtOnce", { running(.manual) }, { $0.flush { _ in }.1 },
            state: "running(items: [])", steps: ["complete(1, success(0))"]),
        Row(
            "e3_t3_aSuccessRemovesTheItemReportsItAndGoesOn", { flushing(.manual, [item("a"), item("b")]) },
            { $0.uploadSucceeded(ids["a"]!) },
            state: "running(items: [b], flush: b uploaded 1 waiters 1)",
            steps: ["remove(a)", "itemUploaded", "upload(b)"]),
        Row(
            "e5_theLastSuccessEndsTheFlushWithItsCount",
            {
                var machine = flushing(.manual, [item("a"), item("b")], waiters: 2)
                _ = machine.uploadSucceeded(ids["a"]!)
                return machine
            },
            { $0.uploadSucceeded(ids["b"]!) },
            state: "running(items: [])", steps: ["remove(b)", "itemUploaded", "complete(2, success(2))"]),
        Row(
            "e5_anItemQueuedDuringAFlushIsUploadedByIt", { flushing(.manual, [item("a")]) },
            { $0.tracked("b") + $0.uploadSucceeded(ids["a"]!) },
            state: "running(items: [b], flush: b uploaded 1 waiters 1)",
            steps: ["sync", "remove(a)", "itemUploaded", "upload(b)"]),
    ]

    @Test(arguments: flushRows) func e5_flushes(_ row: Row) {
        Self.check(row)
    }

    // MARK: - Failures (E2, E3)

    static let failureRows: [Row] = [
        Row(
            "e3_aTransientFailurePausesTheWholeQueueWithBackoff", { flushing(.immediate, [item("a"), item("b")]) },
            { $0.uploadFailed(ids["a"]!, unavailable, at: now) },
            state: "running(items: [a, b], retry: attempt 1 timer 1)",
            steps: ["log(warning)", "schedule(timer 1, 2.0)", "complete(1, failure(503))"]),
        Row(
            "e3_anAuthorizationFailurePausesTheWholeQueueAndDropsNothing", { flushing(.immediate, [item("a"), item("b")]) },
            { $0.uploadFailed(ids["a"]!, unauthorized, at: now) },
            state: "running(items: [a, b], retry: attempt 1 timer 1)",
            steps: ["log(warning)", "schedule(timer 1, 2.0)", "complete(1, failure(401))"]),
        Row(
            "e3_theBackoffHonoursRetryAfter", { flushing(.immediate, [item("a")]) },
            { $0.uploadFailed(ids["a"]!, throttled, at: now) },
            state: "running(items: [a], retry: attempt 1 timer 1)",
            steps: ["log(warning)", "schedule(timer 1, 120.0)", "complete(1, failure(429))"]),
        Row(
            "e3_aFailedRetryDoublesTheBackoff",
            {
                var machine = paused()
                _ = machine.timerFired(TimerID(rawValue: 1), at: now)
                return machine
            },
            { $0.uploadFailed(ids["a"]!, unavailable, at: now) },
            state: "running(items: [a], retry: attempt 2 timer 2)", steps: ["log(warning)", "schedule(timer 2, 4.0)"]),
        Row(
            "e3_aFailedFlushDuringARetryWaitReplacesTheRetry",
            {
                var machine = paused()
                _ = machine.flush { _ in }
                return machine
            },
            { $0.uploadFailed(ids["a"]!, unavailable, at: now) },
            state: "running(items: [a], retry: attempt 2 timer 2)",
            steps: ["log(warning)", "cancel(timer 1)", "schedule(timer 2, 4.0)", "complete(1, failure(503))"]),
        Row(
            "e3_e5_inManualModeAPauseSchedulesNothing", { flushing(.manual, [item("a")]) },
            { $0.uploadFailed(ids["a"]!, unavailable, at: now) },
            state: "running(items: [a])", steps: ["log(warning)", "complete(1, failure(503))"]),
        Row(
            "e2_aSuccessClearsThePendingBackoff",
            {
                var machine = paused()
                _ = machine.flush { _ in }
                return machine
            },
            { $0.uploadSucceeded(ids["a"]!) },
            state: "running(items: [])",
            steps: ["remove(a)", "cancel(timer 1)", "itemUploaded", "complete(1, success(1))"]),
        Row(
            "e3_aPermanentFailureIsCountedPersistedAndTheFlushGoesOn", { flushing(.manual, [item("bad"), item("good")]) },
            { $0.uploadFailed(ids["bad"]!, rejected, at: now) },
            state: "running(items: [bad×1, good], flush: good uploaded 0 waiters 1)",
            steps: ["update(bad×1)", "log(warning)", "upload(good)"]),
        Row(
            "e3_aPermanentFailureAtTheLimitDropsTheItemWithAnErrorLog", { flushing(.manual, [item("bad", failed: 9)]) },
            { $0.uploadFailed(ids["bad"]!, rejected, at: now) },
            state: "running(items: [])", steps: ["remove(bad)", "log(error)", "complete(1, success(0))"]),
    ]

    @Test(arguments: failureRows) func e3_failures(_ row: Row) {
        Self.check(row)
    }

    // MARK: - Stop (A3, E5)

    static let stopRows: [Row] = [
        // The upload out at the stop comes back later (A3, E4); the flush's waiter is told
        // `.stopped` now.
        Row(
            "a3_e5_stopFailsTheWaitingFlushWithStoppedAndEndsTimers",
            {
                var machine = running(.periodic(seconds: 10), [item("a")])
                _ = machine.flush { _ in }
                return machine
            },
            { $0.stop().1 },
            state: "stopping(items: [a], flush: a uploaded 0 waiters 0)", steps: ["cancel(timer 1)", "complete(1, failure(stopped))"]),
        Row(
            "a4_e5_aPipelineReplacedOnItsStoreHandsTheWaitersOfItsFlushToTheNextOne",
            { flushing(.manual, [item("a")]) },
            stopHandingOneFlushToTheSuccessor,
            state: "stopping(items: [a], flush: a uploaded 0 waiters 0)", steps: []),
        Row(
            "a4_e5_aFlushNoOneWaitsForIsHandedToTheNextPipelineOnItsStoreToo",
            { flushing(.immediate, [item("a")], waiters: 0) },
            stopHandingOneFlushToTheSuccessor,
            state: "stopping(items: [a], flush: a uploaded 0 waiters 0)", steps: []),
        Row(
            "a4_e5_aPipelineReplacedWhileLoadingHandsItsFlushesOverAndAnswersCounts",
            {
                var machine = loading()
                _ = machine.flush { _ in }
                _ = machine.countWhenLoaded { _ in }
                return machine
            },
            stopHandingOneFlushToTheSuccessor,
            state: "stopped", steps: ["count(1, 0)"]),
        Row(
            "e3_e5_anUploadOutAtTheStopEndsAtATransientFailureWithNoBackoff",
            {
                var machine = flushing(.immediate, [item("a"), item("b")], waiters: 0)
                _ = machine.stop()
                return machine
            },
            { $0.uploadFailed(ids["a"]!, unavailable, at: now) },
            state: "stopped", steps: ["log(warning)", "release"]),
        Row(
            "a3_e5_stopWhileLoadingAnswersEveryoneWaiting",
            {
                var machine = loading()
                _ = machine.flush { _ in }
                _ = machine.countWhenLoaded { _ in }
                return machine
            },
            { $0.stop().1 },
            state: "stopped", steps: ["complete(1, failure(stopped))", "count(1, 0)"]),
        Row(
            "a3_stopEndsAPendingRetry", { paused() }, { $0.stop().1 },
            state: "stopped", steps: ["cancel(timer 1)", "release"]),
        Row(
            "a3_aFlushAfterStopFailsWithStopped", { stopped() }, { $0.flush { _ in }.1 },
            state: "stopped", steps: ["complete(1, failure(stopped))"]),
        // E4: the backend has it, so its removal is written: neither the next start nor the next
        // pipeline on the store uploads it again.
        Row(
            "a3_e4_anUploadComingBackAfterStopWritesItsRemovalAndEndsTheFlush",
            {
                var machine = flushing(.manual, [item("a")])
                _ = machine.stop()
                return machine
            },
            { $0.uploadSucceeded(ids["a"]!) },
            state: "stopped", steps: ["remove(a)", "itemUploaded", "release"]),
        Row(
            "a3_e4_noUploadStartsAfterTheStopWhenTheOneOutComesBack",
            {
                var machine = flushing(.manual, [item("a"), item("b")])
                _ = machine.stop()
                return machine
            },
            { $0.uploadSucceeded(ids["a"]!) },
            state: "stopped", steps: ["remove(a)", "itemUploaded", "release"]),
        Row(
            "a3_e4_anUploadDecidedBeforeTheStopIsNotSentAfterItAndThePipelineSettles",
            {
                var machine = flushing(.manual, [item("a")])
                _ = machine.stop()
                _ = machine.whenSettled {}
                return machine
            },
            { machine in
                let (send, steps) = machine.beforeUpload(ids["a"]!)
                #expect(!send)
                return steps
            },
            state: "stopped", steps: ["release", "settled(1)"]),
        Row(
            "e4_a4_aStoppedPipelineIsSettledOnceItsFlushEnded",
            {
                var machine = flushing(.manual, [item("a")])
                _ = machine.stop()
                _ = machine.whenSettled {}
                return machine
            },
            { $0.uploadSucceeded(ids["a"]!) },
            state: "stopped", steps: ["remove(a)", "itemUploaded", "release", "settled(1)"]),
        Row(
            "e4_a4_aStoppedPipelineWithNoFlushIsSettledAtOnce", { stopped() }, { $0.whenSettled {} },
            state: "stopped", steps: ["settled(1)"]),
        Row(
            "e4_a4_aRunningPipelineIsNotSettled", { running(.manual, [item("a")]) }, { $0.whenSettled {} },
            state: "running(items: [a])", steps: []),
        Row(
            "a3_e4_aStoppedPipelineSendsNoUploadItsFlushNoLongerWaitsFor", { stopped() },
            { machine in machine.beforeUpload(ids["a"]!).1 },
            state: "stopped", steps: []),
        Row(
            "a3_aLoadEndingAfterStopIsIgnored",
            {
                var machine = loading(.immediate)
                _ = machine.stop()
                return machine
            },
            { $0.loaded([item("s1")]) },
            state: "stopped", steps: []),
        Row(
            "a3_r2_anItemWrittenBeforeStopStillGetsItsSync",
            {
                var machine = running()
                try! machine.admit()
                _ = machine.stop()
                return machine
            },
            { $0.appended(item("a")).1 },
            state: "stopped", steps: ["sync", "release"]),
        // Admitted before the stop, written after it: it stays on disk for the next start (or
        // the next pipeline adopts it); no upload starts after the stop (A3), and the pipeline
        // is settled only once its write came back (E4).
        Row(
            "a3_a4_e4_anItemAdmittedBeforeStopIsLeftOnDiskAndThenThePipelineSettles",
            {
                var machine = running(.immediate)
                try! machine.admit()
                _ = machine.stop()
                _ = machine.whenSettled {}
                return machine
            },
            { machine in
                let (queued, steps) = machine.appended(item("a"))
                #expect(!queued)
                return steps
            },
            state: "stopped", steps: ["sync", "release", "settled(1)"]),
    ]

    /// Stops `machine` with a successor on its store, expecting one flush handed to it.
    static func stopHandingOneFlushToTheSuccessor(_ machine: inout Machine) -> Steps<Machine.Action> {
        let (handed, steps) = machine.stop(to: successor)
        #expect(handed.count == 1)
        return steps
    }

    static func stopped() -> Machine {
        var machine = running()
        _ = machine.stop()
        return machine
    }

    // MARK: - The network path (N1, N2)

    /// `machine` told that the path went away.
    static func offline(_ machine: Machine) -> Machine {
        var machine = machine
        _ = machine.networkPathChanged(.unusable)
        return machine
    }

    static let pathRows: [Row] = [
        Row(
            "n1_offlineAnEnqueueInImmediateModeStartsNoUpload", { offline(running(.immediate)) }, { $0.tracked("a") },
            state: "running(items: [a], offline)", steps: ["sync"]),
        Row(
            "n1_offlineTheStoredQueueLoadsButNothingIsUploaded", { offline(loading(.immediate)) }, { $0.loaded([item("s1")]) },
            state: "running(items: [s1], offline)", steps: []),
        Row(
            "n1_e5_offlineAFlushEndsAtOnceWithAFailure", { offline(running(.manual, [item("a")])) }, { $0.flush { _ in }.1 },
            state: "running(items: [a], offline)", steps: ["complete(1, failure(network))"]),
        Row(
            "n1_offlineATransientFailureCountsNoRetryAndGrowsNoBackoff", { offline(flushing(.immediate, [item("a"), item("b")])) },
            { $0.uploadFailed(ids["a"]!, unavailable, at: now) },
            state: "running(items: [a, b], offline)", steps: ["log(warning)", "complete(1, failure(503))"]),
        Row(
            "n1_aBackoffTimerFiringOfflineStartsNoAttempt", { offline(paused()) },
            { $0.timerFired(TimerID(rawValue: 1), at: now) },
            state: "running(items: [a], retry: attempt 1, offline)", steps: []),
        Row(
            "n1_thePeriodicTimerFiringOfflineOnlyRearms", { offline(running(.periodic(seconds: 10), [item("a")])) },
            { $0.timerFired(TimerID(rawValue: 1), at: now) },
            state: "running(items: [a], periodic: timer 2, offline)", steps: ["schedule(timer 2, 10.0)"]),
        Row(
            "n1_anUploadOutWhenThePathWentAwayStillCountsButTheFlushStopsThere",
            { offline(flushing(.manual, [item("a"), item("b")])) }, { $0.uploadSucceeded(ids["a"]!) },
            state: "running(items: [b], offline)", steps: ["remove(a)", "itemUploaded", "complete(1, failure(network))"]),
        Row(
            "n2_thePathsReturnCutsTheBackoffShortAndFlushes", { offline(paused([item("a"), item("b")])) },
            { $0.networkPathChanged(.usable) },
            state: "running(items: [a, b], flush: a uploaded 0 waiters 0, retry: attempt 1)",
            steps: ["cancel(timer 1)", "upload(a)"]),
        Row(
            "n2_thePathsReturnFlushesInAutomaticMode", { offline(running(.automatic, [item("a")])) },
            { $0.networkPathChanged(.usable) },
            state: "running(items: [a], flush: a uploaded 0 waiters 0)", steps: ["upload(a)"]),
        Row(
            "n2_thePathsReturnFlushesInPeriodicMode", { offline(running(.periodic(seconds: 10), [item("a")])) },
            { $0.networkPathChanged(.usable) },
            state: "running(items: [a], flush: a uploaded 0 waiters 0, periodic: timer 1)", steps: ["upload(a)"]),
        Row(
            "n2_inManualModeThePathsReturnFlushesNothing", { offline(running(.manual, [item("a")])) },
            { $0.networkPathChanged(.usable) },
            state: "running(items: [a])", steps: []),
        Row(
            "n2_aPathThatWasNeverLostFlushesNothing", { running(.automatic, [item("a")]) },
            { $0.networkPathChanged(.usable) },
            state: "running(items: [a])", steps: []),
        Row(
            "n2_aPathThatReturnsWhileLoadingFlushesOnceLoadedInAutomaticMode", { offline(loading(.automatic)) },
            { $0.networkPathChanged(.usable) + $0.loaded([item("s1")]) },
            state: "running(items: [s1], flush: s1 uploaded 0 waiters 1)", steps: ["upload(s1)"]),
        Row(
            "n2_aPathThatReturnsWhileLoadingInManualModeFlushesNothing", { offline(loading(.manual)) },
            { $0.networkPathChanged(.usable) + $0.loaded([item("s1")]) },
            state: "running(items: [s1])", steps: []),
        Row(
            "n2_aPathThatReturnsWhileLoadingAppliesOnceLoaded", { offline(loading(.immediate)) },
            { $0.networkPathChanged(.usable) + $0.loaded([item("s1")]) },
            state: "running(items: [s1], flush: s1 uploaded 0 waiters 1)", steps: ["upload(s1)"]),
    ]

    @Test(arguments: pathRows) func n1_n2_thePath(_ row: Row) {
        Self.check(row)
    }

    /// N1: the failure a flush gets offline says why.
    @Test func n1_aFlushOfflineFailsWithTheOfflineReason() {
        var machine = Self.offline(Self.running(.manual, [Self.item("a")]))
        let outcome = Recorder<SegmentsFlushResult>()
        let (_, steps) = machine.flush { outcome.record($0) }
        for step in steps {
            if case .perform(.completeFlushes(let waiters, let result)) = step { waiters.forEach { $0(result) } }
        }
        let result = outcome.all
        #expect(result.count == 1)
        guard case .failure(let error)? = result.first else { Issue.record("not a failure: \(result)"); return }
        #expect(error.reason == .offline)
    }

    @Test(arguments: stopRows) func a3_stop(_ row: Row) {
        Self.check(row)
    }

    // MARK: - Items read again from the store (P8, E4)

    static let rereadRows: [Row] = [
        // Finding 13: the protected-data retry read the item back before its removal was written.
        Row(
            "p8_e4_anItemUploadedWhoseRemovalIsNotWrittenYetIsNotQueuedAgain",
            {
                var machine = flushing(.immediate, [item("a")], waiters: 0)
                _ = machine.uploadSucceeded(ids["a"]!)
                return machine
            },
            { $0.adopt(item("a")) },
            state: "running(items: [])", steps: []),
        Row(
            "p8_e4_anItemDroppedWhoseRemovalIsNotWrittenYetIsNotQueuedAgain",
            {
                var machine = flushing(.manual, [item("a", failed: 9)])
                _ = machine.uploadFailed(ids["a"]!, SegmentsError(.httpStatus, "bad request", httpStatus: 400), at: now)
                return machine
            },
            { $0.adopt(item("a", failed: 9)) },
            state: "running(items: [])", steps: []),
    ]

    @Test(arguments: rereadRows) func p8_reread(_ row: Row) {
        Self.check(row)
    }

    /// A3: a stopped machine refuses new items with `.stopped`.
    @Test func a3_aStoppedMachineRefusesItems() {
        var machine = Self.stopped()
        let error = #expect(throws: SegmentsError.self) { try machine.admit() }
        #expect(error?.code == .stopped)
    }
}

/// Two transitions' steps, in order.
private func + (
    first: Steps<TrackingStateMachine.Action>, second: Steps<TrackingStateMachine.Action>
) -> Steps<TrackingStateMachine.Action> {
    var all = first
    for step in second { all.append(step: step) }
    return all
}

extension TrackingStateMachine {
    /// An item `name` admitted and written (what `track` does around the caller's write).
    fileprivate mutating func tracked(_ name: String) -> Steps<Action> {
        try! admit()
        return appended(TrackingStateMachineTests.item(name)).1
    }
}
