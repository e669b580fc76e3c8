import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// Table tests of the client machine's parts, each on its own: a row is where the part is, one
/// event, and the actions and state it must decide (see Docs/decisions/0006-one-client-one-machine.md).
@Suite(Hang.timeLimit(minutes: 1)) struct SubMachineTableTests {
    // MARK: - ReloadStateMachine (T5, T6, T7, G2)

    static let debounce = DebouncePolicy(delay: 5, maxWait: 30)
    static let customer = CustomerIds(cookie: "c0")

    /// Where a reload is set up to be.
    enum ReloadStart: String, CaseIterable {
        case idle, debouncing, retrying, fetching, waitingForPath

        func make() -> ReloadStateMachine {
            var reload = ReloadStateMachine()
            switch self {
            case .idle: break
            case .debouncing: _ = reload.request(at: 0, debounce: SubMachineTableTests.debounce)  // timer 1, burst 0…0
            case .retrying: _ = reload.retry(attempt: 2, after: 8)  // timer 1
            case .waitingForPath: _ = reload.waitForPath(attempt: 2)
            case .fetching:
                let ticket = reload.prepareFlight(forListeners: false, retryAttempt: 0)!
                reload.began(SubMachineTableTests.flight(ticket.id, forListeners: false))
            }
            return reload
        }
    }

    static func flight(_ id: Int, forListeners: Bool) -> ReloadStateMachine.Flight {
        .init(id: id, customer: customer, needsLink: false, repository: RecordingSegmentRepository(), forListeners: forListeners, retryAttempt: 0)
    }

    static func describe(_ state: ReloadStateMachine.State) -> String {
        switch state {
        case .idle: "idle"
        case .debouncing(let burst): "debouncing(\(burst.firstRequest)…\(burst.lastRequest), timer \(burst.timer.rawValue))"
        case .retrying(let attempt, let timer): "retrying(\(attempt), timer \(timer.rawValue))"
        case .fetching(let flight, let owed): "fetching(\(flight.id), owed: \(owed))"
        case .waitingForPath(let attempt): "waitingForPath(\(attempt))"
        }
    }

    struct ReloadRow: CustomTestStringConvertible, Sendable {
        let start: ReloadStart
        let event: String
        let actions: [ReloadStateMachine.Action]
        let state: String
        var testDescription: String { "\(start.rawValue) + \(event)" }
    }

    static let reloadRows: [ReloadRow] = [
        // A request: a burst starts, moves, is absorbed by a retry, or owes a follow-up.
        .init(start: .idle, event: "request at 2", actions: [.scheduleTimer(TimerID(rawValue: 1), after: 5)], state: "debouncing(2.0…2.0, timer 1)"),
        .init(start: .debouncing, event: "request at 2", actions: [], state: "debouncing(0.0…2.0, timer 1)"),
        .init(start: .retrying, event: "request at 2", actions: [], state: "retrying(2, timer 1)"),
        .init(start: .fetching, event: "request at 2", actions: [], state: "fetching(1, owed: true)"),
        // The debounce's timer: early (the burst moved) it re-arms; due, the reload starts.
        .init(start: .debouncing, event: "timer 1 at 5", actions: [.startReload(retryAttempt: 0)], state: "idle"),
        .init(start: .retrying, event: "timer 1 at 8", actions: [.startReload(retryAttempt: 2)], state: "idle"),
        .init(start: .debouncing, event: "timer 7 at 5", actions: [], state: "debouncing(0.0…0.0, timer 1)"),
        .init(start: .fetching, event: "timer 1 at 5", actions: [], state: "fetching(1, owed: false)"),
        // A flight absorbs a pending debounce or backoff, and is joined while one is in flight.
        .init(start: .debouncing, event: "prepare", actions: [.cancelTimer(TimerID(rawValue: 1))], state: "idle"),
        .init(start: .retrying, event: "prepare", actions: [.cancelTimer(TimerID(rawValue: 1))], state: "idle"),
        .init(start: .fetching, event: "prepare", actions: [], state: "fetching(1, owed: false)"),
        // Cancel drops what is pending or in flight; the backoff alone ends on a new customer.
        .init(start: .debouncing, event: "cancel", actions: [.cancelTimer(TimerID(rawValue: 1))], state: "idle"),
        .init(start: .fetching, event: "cancel", actions: [], state: "idle"),
        .init(start: .retrying, event: "endBackoff", actions: [.cancelTimer(TimerID(rawValue: 1))], state: "idle"),
        .init(start: .debouncing, event: "endBackoff", actions: [], state: "debouncing(0.0…0.0, timer 1)"),
        .init(start: .fetching, event: "endBackoff", actions: [], state: "fetching(1, owed: false)"),
        // N1: offline, a due reload waits for the path with its chain as it was (no retry counted).
        .init(start: .idle, event: "waitForPath 0", actions: [], state: "waitingForPath(0)"),
        .init(start: .debouncing, event: "waitForPath 0", actions: [.cancelTimer(TimerID(rawValue: 1))], state: "waitingForPath(0)"),
        .init(start: .retrying, event: "waitForPath 2", actions: [.cancelTimer(TimerID(rawValue: 1))], state: "waitingForPath(2)"),
        .init(start: .fetching, event: "waitForPath 0", actions: [], state: "fetching(1, owed: false)"),
        .init(start: .waitingForPath, event: "waitForPath 0", actions: [], state: "waitingForPath(2)"),
        .init(start: .waitingForPath, event: "request at 2", actions: [], state: "waitingForPath(2)"),
        .init(start: .waitingForPath, event: "timer 1 at 8", actions: [], state: "waitingForPath(2)"),
        .init(start: .waitingForPath, event: "prepare", actions: [], state: "idle"),
        .init(start: .waitingForPath, event: "cancel", actions: [], state: "idle"),
        .init(start: .waitingForPath, event: "endBackoff", actions: [], state: "idle"),
        // N2: the path's return cuts a backoff short and starts a reload that waited for it.
        .init(start: .retrying, event: "pathReturned", actions: [.cancelTimer(TimerID(rawValue: 1)), .startReload(retryAttempt: 2)], state: "idle"),
        .init(start: .waitingForPath, event: "pathReturned", actions: [.startReload(retryAttempt: 2)], state: "idle"),
        .init(start: .idle, event: "pathReturned", actions: [], state: "idle"),
        .init(start: .debouncing, event: "pathReturned", actions: [], state: "debouncing(0.0…0.0, timer 1)"),
        .init(start: .fetching, event: "pathReturned", actions: [], state: "fetching(1, owed: false)"),
    ]

    @Test(arguments: reloadRows) func t5_t6_t7_n1_n2_theReloadDecides(_ row: ReloadRow) {
        var reload = row.start.make()
        let actions: [ReloadStateMachine.Action]
        switch row.event {
        case "request at 2": actions = reload.request(at: 2, debounce: Self.debounce)
        case "timer 1 at 5": actions = reload.timerFired(TimerID(rawValue: 1), at: 5, debounce: Self.debounce)
        case "timer 1 at 8": actions = reload.timerFired(TimerID(rawValue: 1), at: 8, debounce: Self.debounce)
        case "timer 7 at 5": actions = reload.timerFired(TimerID(rawValue: 7), at: 5, debounce: Self.debounce)
        case "prepare": actions = reload.prepareFlight(forListeners: false, retryAttempt: 0)?.actions ?? []
        case "cancel": actions = reload.cancel().actions
        case "endBackoff": actions = reload.endBackoff()
        case "waitForPath 0": actions = reload.waitForPath(attempt: 0)
        case "waitForPath 2": actions = reload.waitForPath(attempt: 2)
        case "pathReturned": actions = reload.pathReturned()
        default: Issue.record("unknown event \(row.event)"); return
        }
        #expect(actions == row.actions)
        #expect(Self.describe(reload.state) == row.state)
    }

    @Test func t5_aBurstIsDebouncedNoLaterThanItsMaxWait() {
        var reload = ReloadStateMachine()
        #expect(reload.request(at: 0, debounce: Self.debounce) == [.scheduleTimer(TimerID(rawValue: 1), after: 5)])
        for second in stride(from: 4.0, through: 28, by: 4) { #expect(reload.request(at: second, debounce: Self.debounce).isEmpty) }
        // Due at min(28 + 5, 0 + 30) = 30: fired at 5, it re-arms for the rest.
        #expect(reload.timerFired(TimerID(rawValue: 1), at: 5, debounce: Self.debounce) == [.scheduleTimer(TimerID(rawValue: 2), after: 25)])
        #expect(reload.timerFired(TimerID(rawValue: 2), at: 30, debounce: Self.debounce) == [.startReload(retryAttempt: 0)])
    }

    @Test func t5_withoutADebounceARequestStartsTheReloadAtOnce() {
        var reload = ReloadStateMachine()
        #expect(reload.request(at: 3, debounce: DebouncePolicy(delay: 0, maxWait: 0)) == [.startReload(retryAttempt: 0)])
        #expect(Self.describe(reload.state) == "idle")
    }

    @Test func t6_aPreparedFlightGoesOnWithTheBackoffsChainAndServesListeners() throws {
        var reload = ReloadStart.retrying.make()
        let prepared = reload.prepareFlight(forListeners: false, retryAttempt: 0)
        let ticket = try #require(prepared)
        #expect(ticket.forListeners && ticket.retryAttempt == 2)
        reload.began(Self.flight(ticket.id, forListeners: true))
        #expect(reload.pending.owed)
        #expect(reload.finished(ticket.id + 1) == nil, "another flight's answer is not this one's")
        #expect(reload.finished(ticket.id)?.flight.id == ticket.id)
        #expect(Self.describe(reload.state) == "idle")
    }

    // MARK: - PendingReads (G3, G4, G6)

    @Test func g3_g6_pendingReadsAreAnsweredOnceAndRetriedForANewCustomerABoundedNumberOfTimes() {
        var reads = PendingReads()
        let answered = Recorder<String>()
        func read(_ name: String) -> PendingReads.Read {
            reads.make(.discovery(), force: false, reply: .direct { answered.record("\(name): \((try? $0.get()) == nil ? "failure" : "success")") })
        }
        let a = read("a"), b = read("b")
        reads.waitForFlight(a, of: Self.customer)
        #expect(reads.waitForConfiguration(b).isEmpty)
        // The flight of c0 is discarded: a (charged) and b (came later: not charged) wait again.
        let c1 = CustomerIds(cookie: "c1")
        for retry in 1...2 {
            let (waiting, actions) = reads.customerChanged(during: retry == 1 ? Self.customer : c1, current: c1, maxRetries: 1)
            #expect(waiting, "b still waits: it waited for no flight's customer")
            #expect(actions.count == (retry == 1 ? 0 : 1), "a gives up on its second change only")
            Self.answer(actions)
        }
        #expect(answered.all == ["a: failure"])
        Self.answer(reads.withdraw(b.id))
        #expect(answered.all == ["a: failure", "b: failure"])
        #expect(reads.isEmpty)
    }

    @Test func g4_aWithdrawnReadIsAnsweredCancelledOnceAndAnsweringAllSkipsIt() {
        var reads = PendingReads()
        let answered = Recorder<String>()
        let a = reads.make(.discovery(), force: false, reply: .direct { answered.record("a \($0)") })
        let b = reads.make(.content(), force: false, reply: .direct { answered.record("b \((try? $0.get()) ?? [])") })
        _ = reads.waitForConfiguration(a)
        _ = reads.waitForConfiguration(b)
        Self.answer(reads.withdraw(a.id))
        #expect(reads.withdraw(a.id).isEmpty)
        Self.answer(reads.answerAll(.success([.content(): [Segment(id: "s", segmentationId: "g")]])))
        #expect(answered.count == 2 && answered.all[0].contains("cancelled"))
        #expect(reads.isEmpty && reads.answerAll(.success([:])).isEmpty)
    }

    @Test func g4_readsBeyondTheBoundBeforeConfigureAreRefused() {
        var reads = PendingReads()
        for _ in 0..<PendingReads.maxWaitingForConfigure {
            #expect(reads.waitForConfiguration(reads.make(.discovery(), force: false, reply: .direct { _ in })).isEmpty)
        }
        let refused = reads.waitForConfiguration(reads.make(.discovery(), force: false, reply: .direct { _ in }))
        guard case .answer(let answered, .failure(let error)) = refused.first else {
            Issue.record("not refused: \(refused)")
            return
        }
        #expect(answered.count == 1 && error.code == .notConfigured)
    }

    static func answer(_ actions: [PendingReads.Action]) {
        for case .answer(let reads, let result) in actions {
            for read in reads {
                if case .direct(let resume) = read.reply { resume(result.map { $0[read.category] ?? [] }) }
            }
        }
    }

    // MARK: - LifecycleStateMachine (T2, R1, R3, A1, A3, A4, E2, P5, P8)

    static func ports(_ storage: String?, handOver: (any StorageHandOver)? = RecordingStorageHandOver()) -> SegmentationEngine.Ports {
        SegmentationEngine.Ports(
            repository: RecordingSegmentRepository(), customerStore: RecordingCustomerStore(), baselineStore: RecordingSegmentBaselineStore(),
            integrationID: "project", storageID: storage, handOver: handOver)
    }

    static func names(_ actions: [LifecycleStateMachine.Action]) -> [String] {
        actions.compactMap { action -> String? in
            switch action {
            case .log(let level, _): "log(\(level))"
            case .saveCustomer(let customer, _, _): "saveCustomer(\(customer.cookie ?? "-"))"
            case .saveBaseline: "saveBaseline"
            case .loadBaseline(let id, _): "loadBaseline(\(id))"
            case .setFlushingMode(_, let mode): "mode(\(mode))"
            case .startTracking: "startTracking"
            case .storageWritesQueued: "writesQueued"
            case .handedOverCustomerWritten(let storageID): "handedOverCustomerWritten(\(storageID))"
            case .watchSettled: nil  // the ended pipeline's settle (Behaviour E4), not listed here
            case .redoRefusedStorage(_, let storageID, _): "redo(\(storageID))"
            case .erase(let id, _, _): "erase(\(id))"
            case .completeAfterStorageWork(let completions): "completeAfterStorageWork(\(completions.count))"
            case .complete(let completions): "complete(\(completions.count))"
            }
        }
    }

    /// A lifecycle configured on `storage` with the stored customer c0, its baseline in.
    static func running(on storage: String? = "folder-a") -> LifecycleStateMachine {
        var lifecycle = LifecycleStateMachine(timings: SegmentationTimings())
        _ = lifecycle.configure(ports(storage), namedMode: nil, stored: .some(customer), newCookie: nil, reload: (false, nil), hasListeners: false)
        _ = lifecycle.baselineLoaded(1, .empty)
        return lifecycle
    }

    struct LifecycleRow: CustomTestStringConvertible, Sendable {
        let event: String
        let outcome: String
        let actions: [String]
        var testDescription: String { event }
    }

    static let lifecycleRows: [LifecycleRow] = [
        // The same folder keeps the customer from memory; another folder, or memory, ends the old one.
        .init(event: "configure folder-a", outcome: "configured, customer c0, ending: none", actions: ["loadBaseline(2)"]),
        .init(
            event: "configure folder-b", outcome: "configured, needs the stored customer", actions: []),
        .init(
            event: "configure memory", outcome: "configured, needs the stored customer", actions: []),
        .init(
            event: "configure folder-b with c9", outcome: "configured, customer c9, ending: storage(c0)",
            actions: ["writesQueued", "loadBaseline(2)"]),
        .init(event: "identify bob", outcome: "identified, changed", actions: ["saveCustomer(c0)"]),
        .init(event: "identify bob after an anonymize", outcome: "not changed", actions: []),
        .init(event: "anonymize", outcome: "customer n1, emptied 0", actions: ["saveCustomer(n1)", "saveBaseline"]),
        .init(event: "end", outcome: "stopped, ending: storage(c0)", actions: ["writesQueued"]),
        .init(event: "stored customer read", outcome: "not adopted", actions: ["saveCustomer(c0)"]),
        .init(event: "protected data available", outcome: "-", actions: []),
        .init(event: "manual mode with listeners", outcome: "-", actions: ["log(warning)"]),
    ]

    @Test(arguments: lifecycleRows) func t2_a3_a4_p5_theLifecycleDecides(_ row: LifecycleRow) {
        var lifecycle = Self.running()
        var outcome = "-"
        var actions: [LifecycleStateMachine.Action] = []
        func describe(_ result: LifecycleStateMachine.ConfigureOutcome, _ decided: [LifecycleStateMachine.Action]) {
            actions = decided
            switch result {
            case .configured(let ending):
                let storage = ending.storage.map { "storage(\($0.lastCustomer.cookie ?? "-"))" } ?? "none"
                outcome = "configured, customer \(lifecycle.customer?.cookie ?? "-"), ending: \(storage)"
            case .needsStoredCustomer: outcome = "configured, needs the stored customer"
            case .needsNewCookie: outcome = "needs a cookie"
            }
        }
        func configure(_ storage: String?, stored: CustomerIds?? = nil) {
            let (result, decided, _) = lifecycle.configure(
                Self.ports(storage), namedMode: nil, stored: stored, newCookie: nil, reload: (false, nil), hasListeners: false)
            describe(result, decided)
        }
        switch row.event {
        case "configure folder-a": configure("folder-a")
        case "configure folder-b": configure("folder-b")
        case "configure memory": configure(nil)
        case "configure folder-b with c9": configure("folder-b", stored: .some(CustomerIds(cookie: "c9")))
        case "identify bob":
            let begun = lifecycle.beginIdentify(hardIds: ["registered": "bob"])
            let (changed, decided) = lifecycle.endIdentify(begun?.ticket ?? 0, queued: true)
            outcome = "\(begun == nil ? "not identified" : "identified")\(changed ? ", changed" : "")"
            actions = decided
        case "identify bob after an anonymize":
            let begun = lifecycle.beginIdentify(hardIds: ["registered": "bob"])
            _ = lifecycle.anonymize(newCookie: "n1")
            let (changed, decided) = lifecycle.endIdentify(begun?.ticket ?? 0, queued: true)
            outcome = changed ? "changed" : "not changed"
            actions = decided
        case "anonymize":
            let anonymized = lifecycle.anonymize(newCookie: "n1")
            outcome = "customer \(anonymized?.customer.cookie ?? "-"), emptied \(anonymized?.emptied.count ?? -1)"
            actions = anonymized?.actions ?? []
        case "end":
            let (ending, decided, _) = lifecycle.end()
            outcome = "\(lifecycle.isStopped ? "stopped" : "running"), ending: \(ending.storage.map { "storage(\($0.lastCustomer.cookie ?? "-"))" } ?? "none")"
            actions = decided
        case "stored customer read":
            let (adopted, decided) = lifecycle.storedCustomerRead(CustomerIds(cookie: "s1"), in: "folder-a")
            outcome = adopted ? "adopted" : "not adopted"
            actions = decided
        case "protected data available":
            actions = lifecycle.protectedDataBecameAvailable()  // no redo port: nothing to redo
        case "manual mode with listeners":
            actions = lifecycle.setFlushingMode(.manual, hasListeners: true)
            #expect(lifecycle.setFlushingMode(.manual, hasListeners: true).isEmpty, "warned once")
        default:
            Issue.record("unknown event \(row.event)")
        }
        #expect(outcome == row.outcome)
        #expect(Self.names(actions) == row.actions)
    }

    @Test func t2_d4_memoryIsNeverTheSameStorage() {
        #expect(!LifecycleStateMachine.sameStorage(Self.ports(nil), Self.ports(nil)))
        #expect(!LifecycleStateMachine.sameStorage(Self.ports("a"), Self.ports("b")))
        #expect(LifecycleStateMachine.sameStorage(Self.ports("a"), Self.ports("a")))
    }

    @Test func r1_aConfigureWhileASaveIsPendingTakesTheCustomerFromMemory() {
        var lifecycle = Self.running()
        _ = lifecycle.anonymize(newCookie: "n1")  // its save is queued, not written
        _ = lifecycle.end()
        let (result, _, _) = lifecycle.configure(
            Self.ports("folder-a"), namedMode: nil, stored: nil, newCookie: nil, reload: (false, nil), hasListeners: false)
        #expect(result == .configured)
        #expect(lifecycle.customer?.cookie == "n1")
        lifecycle.customerSaved(in: "folder-a")
        _ = lifecycle.end()
        let (again, _, _) = lifecycle.configure(
            Self.ports("folder-a"), namedMode: nil, stored: nil, newCookie: nil, reload: (false, nil), hasListeners: false)
        #expect(again == .needsStoredCustomer, "written: the store is the truth again")
    }

    @Test func t2_t6_aReloadPendingAtConfigureIsOwedOnceTheBaselineIsIn() {
        var lifecycle = Self.running()
        let (_, _, _) = lifecycle.configure(
            Self.ports("folder-a"), namedMode: nil, stored: nil, newCookie: nil, reload: (true, 12), hasListeners: false)
        #expect(lifecycle.isLoading)
        let (loaded, _) = lifecycle.baselineLoaded(2, .empty)
        #expect(loaded?.reloadOwed == true && loaded?.burstStarted == 12 && loaded?.otherIntegration == false)
        #expect(lifecycle.baselineLoaded(2, .empty).0 == nil, "a load is taken once")
    }
}
