import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The engine's state machine, driven directly: no scheduler, no queues, no engine. Each
/// transition is checked for the state it leaves and the actions it returns (see Behaviour T5–T7, T10,
/// D6, A1, G2).
@Suite(Hang.timeLimit(minutes: 1)) struct SegmentationStateMachineTests {
    typealias Machine = SegmentationStateMachine

    static let backend = SegmentationEngine.Ports(
        repository: RecordingSegmentRepository(), customerStore: RecordingCustomerStore(),
        baselineStore: RecordingSegmentBaselineStore())
    static let customer = CustomerIds(cookie: "cookie-a")
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func at(_ seconds: TimeInterval) -> Machine.Moment {
        Machine.Moment(uptime: seconds, wall: t0.addingTimeInterval(seconds))
    }

    /// A configured machine with one listener of discovery.
    static func configured(firstLoad: Bool = false) -> Machine {
        var machine = Machine(timings: SegmentationTimings(), random: { 0.5 })
        _ = machine.addListener(
            SegmentListener(category: .discovery(), includeFirstLoad: firstLoad) { _ in }, group: nil, owner: nil,
            at: at(0))
        _ = machine.configure(backend, loaded: .init(customer: customer, baseline: .empty), at: at(0))
        return machine
    }

    /// The state, in words.
    static func describe(_ reload: Machine.Reload) -> String {
        switch reload {
        case .idle: "idle"
        case .debouncing(let burst): "debouncing(\(burst.firstRequest)…\(burst.lastRequest))"
        case .retrying(let attempt, _): "retrying(\(attempt))"
        case .fetching(let flight, let owed): "fetching(carries: \(flight.carriesReload), owed: \(owed))"
        }
    }

    /// The actions, in words (logs left out).
    static func describe(_ actions: some Sequence<Machine.Action>) -> [String] {
        actions.compactMap { action in
            switch action {
            case .log, .logLinkFailure: nil
            case .scheduleTimer(_, let delay): "timer(\(delay))"
            case .cancelTimer: "cancelTimer"
            case .startFlight: "fetch"
            case .deliver(let deliveries): "deliver(\(deliveries.count))"
            case .answer(let reads, let result): "answer(\(reads.count), \((try? result.get()) == nil ? "failure" : "success"))"
            case .saveCustomer: "saveCustomer"
            case .saveBaseline: "saveBaseline"
            case .loadBaseline: "loadBaseline"
            }
        }
    }

    // MARK: - No cookie (C5)

    /// Defensive: a customer without a cookie is never fetched for; a read waiting on it is
    /// answered at once with `.missingCookie` instead of being left without an answer. The engine
    /// always gives the customer a cookie at configure, so only the machine can be put in this state.
    @Test func c5_aCustomerWithoutACookieIsNotFetchedAndTheReadFailsAtOnce() {
        var machine = Self.configured()
        machine.customer = CustomerIds([:])
        let (_, actions) = machine.read(.discovery(), force: true, reply: .direct { _ in }, at: Self.at(1))
        #expect(Self.describe(actions) == ["answer(1, failure)"])
        let codes = actions.compactMap { action -> SegmentsError.Code? in
            if case .answer(_, let result) = action { result.error?.code } else { nil }
        }
        #expect(codes == [.missingCookie])
        #expect(machine.reads.isEmpty)
    }

    // MARK: - Requests (T5, T6)

    @Test func t5_aRequestWhenIdleStartsABurstWithOneTimer() {
        var machine = Self.configured()
        #expect(Self.describe(machine.reload) == "idle")
        var actions = Machine.Actions()
        machine.requestReload(at: Self.at(1), &actions)
        #expect(Self.describe(machine.reload) == "debouncing(1.0…1.0)")
        #expect(Self.describe(actions) == ["timer(5.0)"])
    }

    @Test func t5_requestsDuringTheDebounceOnlyMoveTheBurstsEnd() {
        var machine = Self.configured()
        var actions = Machine.Actions()
        machine.requestReload(at: Self.at(1), &actions)
        actions = []
        machine.requestReload(at: Self.at(3), &actions)
        #expect(Self.describe(machine.reload) == "debouncing(1.0…3.0)")
        #expect(actions.isEmpty)
    }

    @Test func t5_theTimerFiringEarlyRearmsForTheRestThenFetches() throws {
        var machine = Self.configured()
        var actions = Machine.Actions()
        machine.requestReload(at: Self.at(0), &actions)
        machine.requestReload(at: Self.at(4), &actions)
        let timer = try #require(machine.currentTimer)
        #expect(Self.describe(machine.timerFired(timer, at: Self.at(5))) == ["timer(4.0)"])
        #expect(machine.timerFired(timer, at: Self.at(5)).isEmpty)  // the replaced timer is stale
        let rearmed = try #require(machine.currentTimer)
        #expect(Self.describe(machine.timerFired(rearmed, at: Self.at(9))) == ["fetch"])
        #expect(Self.describe(machine.reload) == "fetching(carries: true, owed: false)")
    }

    @Test func t5_maxWaitCapsABurst() throws {
        var machine = Self.configured()
        var actions = Machine.Actions()
        for second in stride(from: 0.0, through: 28, by: 4) { machine.requestReload(at: Self.at(second), &actions) }
        machine.requestReload(at: Self.at(29), &actions)
        let timer = try #require(machine.currentTimer)
        #expect(Self.describe(machine.timerFired(timer, at: Self.at(30))) == ["fetch"])
    }

    @Test func t6_aRequestDuringAFlightOwesOneFollowUpAndAbsorbsNoTimer() throws {
        var machine = Self.fetching()
        var actions = Machine.Actions()
        machine.requestReload(at: Self.at(6), &actions)
        machine.requestReload(at: Self.at(7), &actions)
        #expect(actions.isEmpty)
        #expect(Self.describe(machine.reload) == "fetching(carries: true, owed: true)")
    }

    /// A machine with an automatic reload in flight (started at 5 s).
    static func fetching() -> Machine {
        var machine = configured()
        var actions = Machine.Actions()
        machine.requestReload(at: at(0), &actions)
        _ = machine.timerFired(machine.currentTimer!, at: at(5))
        return machine
    }

    // MARK: - Outcomes of a flight (T6, T7, C3)

    struct Outcome: CustomTestStringConvertible, Sendable {
        let name: String
        let result: Result<SegmentsByCategory, SegmentsError>
        let followUpOwed: Bool
        let state: String
        let actions: [String]
        var testDescription: String { "\(name), follow-up owed: \(followUpOwed)" }
    }

    static let outcomes: [Outcome] = [
        Outcome(
            name: "success", result: .success([.discovery(): []]), followUpOwed: false, state: "idle",
            actions: ["saveBaseline", "deliver(1)"]),
        Outcome(
            name: "success", result: .success([.discovery(): []]), followUpOwed: true,
            state: "debouncing(7.0…7.0)", actions: ["saveBaseline", "deliver(1)", "timer(5.0)"]),
        Outcome(
            name: "transient", result: .failure(SegmentsError(.httpStatus, "busy", httpStatus: 503)), followUpOwed: false,
            state: "retrying(1)", actions: ["timer(2.0)"]),
        Outcome(
            name: "transient", result: .failure(SegmentsError(.httpStatus, "busy", httpStatus: 503)), followUpOwed: true,
            state: "retrying(1)", actions: ["timer(2.0)"]),
        Outcome(
            name: "permanent", result: .failure(SegmentsError(.httpStatus, "gone", httpStatus: 404)), followUpOwed: false,
            state: "idle", actions: []),
        Outcome(
            name: "permanent", result: .failure(SegmentsError(.httpStatus, "gone", httpStatus: 404)), followUpOwed: true,
            state: "debouncing(7.0…7.0)", actions: ["timer(5.0)"]),
    ]

    @Test(arguments: outcomes)
    func t6_t7_everyOutcomeLeavesOneStateAndSchedulesAnOwedFollowUp(_ outcome: Outcome) throws {
        var machine = Self.fetching()
        if outcome.followUpOwed {
            var ignored = Machine.Actions()
            machine.requestReload(at: Self.at(6), &ignored)
        }
        let flight = try #require(machine.flight)
        let actions = machine.flightFinished(flight.id, with: outcome.result, at: Self.at(7))
        #expect(Self.describe(machine.reload) == outcome.state)
        #expect(Self.describe(actions) == outcome.actions)
    }

    @Test func t9_aResultForADiscardedFlightChangesNothing() throws {
        var machine = Self.fetching()
        let flight = try #require(machine.flight)
        _ = machine.stop()
        #expect(machine.flightFinished(flight.id, with: .success([:]), at: Self.at(7)).isEmpty)
    }

    @Test func c3_aResultForAnotherCustomerIsDroppedAndTheOwedReloadRequestedAgain() throws {
        var machine = Self.fetching()
        let flight = try #require(machine.flight)
        _ = machine.identify(hardIds: ["registered": "jane"], at: Self.at(6))
        let actions = machine.flightFinished(flight.id, with: .success([.discovery(): []]), at: Self.at(7))
        #expect(Self.describe(actions) == ["timer(5.0)"])  // nothing stored or delivered
        #expect(Self.describe(machine.reload) == "debouncing(7.0…7.0)")  // identify's request, owed until now
    }

    @Test func t7_theAttemptGrowsAlongAChainAndRestartsAfterIt() throws {
        var machine = Self.fetching()
        let busy = SegmentsError(.httpStatus, "busy", httpStatus: 503)
        var delays: [String] = []
        for second in [7.0, 9.0, 13.0] {
            let flight = try #require(machine.flight)
            delays += Self.describe(machine.flightFinished(flight.id, with: .failure(busy), at: Self.at(second)))
            _ = machine.timerFired(machine.currentTimer!, at: Self.at(second + 10))
        }
        #expect(delays == ["timer(2.0)", "timer(4.0)", "timer(8.0)"])
        let flight = try #require(machine.flight)
        _ = machine.flightFinished(flight.id, with: .success([:]), at: Self.at(40))
        var actions = Machine.Actions()
        machine.requestReload(at: Self.at(41), &actions)
        _ = machine.timerFired(machine.currentTimer!, at: Self.at(46))
        let next = try #require(machine.flight)
        #expect(Self.describe(machine.flightFinished(next.id, with: .failure(busy), at: Self.at(47))) == ["timer(2.0)"])
    }

    // MARK: - Reads (G1, G2, T10)

    @Test func g2_aReadDuringTheDebounceFetchesAtOnceAndCarriesThePendingReload() {
        var machine = Self.configured()
        var actions = Machine.Actions()
        machine.requestReload(at: Self.at(0), &actions)
        let (_, readActions) = machine.read(.discovery(), force: true, reply: .direct { _ in }, at: Self.at(1))
        #expect(Self.describe(readActions) == ["cancelTimer", "fetch"])
        #expect(Self.describe(machine.reload) == "fetching(carries: true, owed: false)")
    }

    @Test func g2_aReadDuringAFlightJoinsIt() {
        var machine = Self.fetching()
        let (_, actions) = machine.read(.discovery(), force: true, reply: .direct { _ in }, at: Self.at(6))
        #expect(actions.isEmpty)
        #expect(machine.reads.count == 1)
    }

    @Test(arguments: [(4.9, true), (5.0, false), (-0.1, false)])
    func t10_g1_theCacheAgeIsMeasuredOnTheMonotonicClock(age: TimeInterval, answersFromCache: Bool) throws {
        var machine = Self.fetching()
        let flight = try #require(machine.flight)
        _ = machine.flightFinished(flight.id, with: .success([:]), at: Self.at(10))
        // The wall clock is set a day back: it must not matter.
        let now = Machine.Moment(uptime: 10 + age, wall: Self.t0.addingTimeInterval(-86_400))
        let (_, actions) = machine.read(.discovery(), force: false, reply: .direct { _ in }, at: now)
        #expect(Self.describe(actions) == (answersFromCache ? ["answer(1, success)"] : ["fetch"]))
    }

    // MARK: - Anonymize (A1, D6)

    @Test func a1_d6_anonymizeCancelsWhatWasPendingAndRequestsAReloadForTheNewCustomer() {
        var machine = Self.configured(firstLoad: true)
        #expect(Self.describe(machine.reload) == "debouncing(0.0…0.0)")
        let (customer, actions) = machine.anonymize(newCookie: "new", at: Self.at(1))
        #expect(customer == CustomerIds(cookie: "new"))
        #expect(Self.describe(actions) == ["cancelTimer", "saveCustomer", "saveBaseline", "timer(5.0)"])
        #expect(Self.describe(machine.reload) == "debouncing(1.0…1.0)")
    }
}
