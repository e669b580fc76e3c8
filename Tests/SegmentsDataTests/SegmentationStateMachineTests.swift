import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The engine's state machine, driven directly: no scheduler, no queues, no engine. Each
/// transition is checked for the state it leaves and the steps it returns (see Behaviour T2, T5–T7,
/// T10, D4, D6, D7, A1, A4, G2, R1).
@Suite(Hang.timeLimit(minutes: 1)) struct SegmentationStateMachineTests {
    typealias Machine = SegmentationStateMachine

    static func ports(
        _ integration: String = "project-a", storage: String? = "folder-a", tracking: TrackingPipeline? = nil,
        repository: any SegmentRepository = RecordingSegmentRepository(),
        handOver: (any StorageHandOver)? = RecordingStorageHandOver()
    ) -> SegmentationEngine.Ports {
        SegmentationEngine.Ports(
            repository: repository, customerStore: RecordingCustomerStore(),
            baselineStore: RecordingSegmentBaselineStore(), tracking: tracking, integrationID: integration, storageID: storage,
            handOver: handOver)
    }
    static let backend = ports()
    static let customer = CustomerIds(cookie: "cookie-a")
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func at(_ seconds: TimeInterval) -> Moment {
        Moment(uptime: seconds, wall: t0.addingTimeInterval(seconds), random: 0.5)
    }

    /// Configures `machine` with `ports` and a stored `customer`, and lets the baseline load;
    /// returns the steps of both transitions.
    @discardableResult
    static func configure(
        _ machine: inout Machine, _ ports: SegmentationEngine.Ports = backend, customer: CustomerIds? = customer,
        baseline: SegmentBaseline = .empty, at seconds: TimeInterval = 0
    ) -> [String] {
        var (outcome, steps) = machine.configure(ports, namedMode: nil, stored: nil, newCookie: nil, at: at(seconds))
        if outcome != .configured {
            (outcome, steps) = machine.configure(ports, namedMode: nil, stored: .some(customer), newCookie: "new", at: at(seconds))
        }
        #expect(outcome == .configured)
        let load = steps.compactMap { step -> Int? in
            if case .perform(.lifecycle(.loadBaseline(let id, _))) = step { id } else { nil }
        }
        let loaded = machine.baselineLoaded(load.first ?? -1, baseline, at: at(seconds))
        return describe(steps) + describe(loaded)
    }

    /// A configured machine with one listener of discovery.
    static func configured(firstLoad: Bool = false) -> Machine {
        var machine = Machine(timings: SegmentationTimings())
        _ = machine.addListener(
            SegmentListener(category: .discovery(), includeFirstLoad: firstLoad) { _ in }, group: nil, owner: nil,
            at: at(0))
        configure(&machine)
        return machine
    }

    /// The state, in words.
    static func describe(_ reload: Machine.Reload?) -> String {
        switch reload {
        case .idle: "idle"
        case .debouncing(let burst): "debouncing(\(burst.firstRequest)…\(burst.lastRequest))"
        case .retrying(let attempt, _): "retrying(\(attempt))"
        case .fetching(let flight, let owed): "fetching(forListeners: \(flight.forListeners), owed: \(owed))"
        case .waitingForPath(let attempt): "waitingForPath(\(attempt))"
        case nil: "not configured"
        }
    }

    /// The steps, in words (logs and releases left out).
    static func describe(_ steps: some Sequence<Step<Machine.Action>>) -> [String] {
        steps.compactMap { step in
            switch step {
            case .scheduleTimer(_, let delay): "timer(\(delay))"
            case .cancelTimer: "cancelTimer"
            case .release: nil
            case .perform(let action):
                switch action {
                case .log, .logLinkFailure, .lifecycle(.log): nil
                case .startFlight: "fetch"
                case .deliver(let deliveries): "deliver(\(deliveries.count))"
                case .reads(.answer(let reads, let result)): "answer(\(reads.count), \((try? result.get()) == nil ? "failure" : "success"))"
                case .lifecycle(.saveCustomer): "saveCustomer"
                case .lifecycle(.saveBaseline): "saveBaseline"
                case .lifecycle(.loadBaseline): "loadBaseline"
                case .lifecycle(.setFlushingMode(_, let mode)): "mode(\(mode))"
                case .lifecycle(.startTracking): "startTracking"
                case .lifecycle(.redoRefusedStorage): "redoRefusedStorage"
                case .endStreams(let ends): "endStreams(\(ends.count))"
                case .lifecycle(.storageWritesQueued): "storageWritesQueued"
                case .lifecycle(.handedOverCustomerWritten): "handedOverCustomerWritten"
                case .lifecycle(.erase(let id, _, _)): "erase(\(id))"
                case .lifecycle(.completeAfterStorageWork(let completions)): "completeAfterStorageWork(\(completions.count))"
                case .lifecycle(.complete(let completions)): "complete(\(completions.count))"
                case .lifecycle(.watchSettled): nil  // the ended pipeline's settle (Behaviour E4)
                case .trackingPath(_, let status): "trackingPath(\(status))"
                }
            }
        }
    }

    /// The lists the deliveries of `steps` would hand their handlers, in order.
    static func delivered(_ steps: some Sequence<Step<Machine.Action>>) -> [[String]] {
        steps.flatMap { step -> [[String]] in
            if case .perform(.deliver(let deliveries)) = step { deliveries.map { $0.segments.map(\.id) } } else { [] }
        }
    }

    /// Requests a reload the way an upload does (see Behaviour T3).
    static func request(_ machine: inout Machine, at seconds: TimeInterval) -> Steps<Machine.Action> {
        machine.itemUploaded(at: at(seconds))
    }

    static func flight(_ machine: Machine) -> Machine.Flight? {
        if case .fetching(let flight, _) = machine.reload { flight } else { nil }
    }

    // MARK: - Requests (T5, T6)

    @Test func t5_aRequestWhenIdleStartsABurstWithOneTimer() {
        var machine = Self.configured()
        #expect(Self.describe(machine.reload) == "idle")
        let actions = Self.request(&machine, at: 1)
        #expect(Self.describe(machine.reload) == "debouncing(1.0…1.0)")
        #expect(Self.describe(actions) == ["timer(5.0)"])
    }

    @Test func t5_requestsDuringTheDebounceOnlyMoveTheBurstsEnd() {
        var machine = Self.configured()
        _ = Self.request(&machine, at: 1)
        let actions = Self.request(&machine, at: 3)
        #expect(Self.describe(machine.reload) == "debouncing(1.0…3.0)")
        #expect(actions.isEmpty)
    }

    @Test func t5_theTimerFiringEarlyRearmsForTheRestThenFetches() throws {
        var machine = Self.configured()
        _ = Self.request(&machine, at: 0)
        _ = Self.request(&machine, at: 4)
        let timer = try #require(machine.currentTimer)
        #expect(Self.describe(machine.timerFired(timer, at: Self.at(5))) == ["timer(4.0)"])
        #expect(machine.timerFired(timer, at: Self.at(5)).isEmpty)  // the replaced timer is stale
        let rearmed = try #require(machine.currentTimer)
        #expect(Self.describe(machine.timerFired(rearmed, at: Self.at(9))) == ["fetch"])
        #expect(Self.describe(machine.reload) == "fetching(forListeners: true, owed: false)")
    }

    @Test func t5_maxWaitCapsABurst() throws {
        var machine = Self.configured()
        for second in stride(from: 0.0, through: 28, by: 4) { _ = Self.request(&machine, at: second) }
        _ = Self.request(&machine, at: 29)
        let timer = try #require(machine.currentTimer)
        #expect(Self.describe(machine.timerFired(timer, at: Self.at(30))) == ["fetch"])
    }

    @Test func t6_aRequestDuringAFlightOwesOneFollowUpAndAbsorbsNoTimer() throws {
        var machine = Self.fetching()
        #expect(Self.request(&machine, at: 6).isEmpty)
        #expect(Self.request(&machine, at: 7).isEmpty)
        #expect(Self.describe(machine.reload) == "fetching(forListeners: true, owed: true)")
    }

    /// A machine with an automatic reload in flight (started at 5 s).
    static func fetching() -> Machine {
        var machine = configured()
        _ = request(&machine, at: 0)
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
            _ = Self.request(&machine, at: 6)
        }
        let flight = try #require(Self.flight(machine))
        let actions = machine.flightFinished(flight.id, with: outcome.result, at: Self.at(7))
        #expect(Self.describe(machine.reload) == outcome.state)
        #expect(Self.describe(actions) == outcome.actions)
    }

    @Test func t9_aResultForADiscardedFlightChangesNothing() throws {
        var machine = Self.fetching()
        let flight = try #require(Self.flight(machine))
        _ = machine.stop()
        #expect(machine.flightFinished(flight.id, with: .success([:]), at: Self.at(7)).isEmpty)
    }

    @Test func c3_aResultForAnotherCustomerIsDroppedAndTheOwedReloadRequestedAgain() throws {
        var machine = Self.fetching()
        let flight = try #require(Self.flight(machine))
        let (identify, _) = machine.beginIdentify(hardIds: ["registered": "jane"])
        _ = machine.endIdentify(try #require(identify).ticket, queued: true, at: Self.at(6))
        let actions = machine.flightFinished(flight.id, with: .success([.discovery(): []]), at: Self.at(7))
        #expect(Self.describe(actions) == ["timer(5.0)"])  // nothing stored or delivered
        #expect(Self.describe(machine.reload) == "debouncing(7.0…7.0)")  // identify's request, owed until now
    }

    @Test func t7_theAttemptGrowsAlongAChainAndRestartsAfterIt() throws {
        var machine = Self.fetching()
        let busy = SegmentsError(.httpStatus, "busy", httpStatus: 503)
        var delays: [String] = []
        for second in [7.0, 9.0, 13.0] {
            let flight = try #require(Self.flight(machine))
            delays += Self.describe(machine.flightFinished(flight.id, with: .failure(busy), at: Self.at(second)))
            _ = machine.timerFired(machine.currentTimer!, at: Self.at(second + 10))
        }
        #expect(delays == ["timer(2.0)", "timer(4.0)", "timer(8.0)"])
        let flight = try #require(Self.flight(machine))
        _ = machine.flightFinished(flight.id, with: .success([:]), at: Self.at(40))
        _ = Self.request(&machine, at: 41)
        _ = machine.timerFired(machine.currentTimer!, at: Self.at(46))
        let next = try #require(Self.flight(machine))
        #expect(Self.describe(machine.flightFinished(next.id, with: .failure(busy), at: Self.at(47))) == ["timer(2.0)"])
    }

    // MARK: - Reads (G1, G2, T10)

    @Test func g2_aReadDuringTheDebounceFetchesAtOnceAndCarriesThePendingReload() {
        var machine = Self.configured()
        _ = Self.request(&machine, at: 0)
        let (_, readActions) = machine.read(.discovery(), force: true, reply: .direct { _ in }, at: Self.at(1))
        #expect(Self.describe(readActions) == ["cancelTimer", "fetch"])
        #expect(Self.describe(machine.reload) == "fetching(forListeners: true, owed: false)")
    }

    @Test func g2_aReadDuringAFlightJoinsIt() {
        var machine = Self.fetching()
        let (_, actions) = machine.read(.discovery(), force: true, reply: .direct { _ in }, at: Self.at(6))
        #expect(actions.isEmpty)
    }

    @Test(arguments: [(4.9, true), (5.0, false), (-0.1, false)])
    func t10_g1_theCacheAgeIsMeasuredOnTheMonotonicClock(age: TimeInterval, answersFromCache: Bool) throws {
        var machine = Self.fetching()
        let flight = try #require(Self.flight(machine))
        _ = machine.flightFinished(flight.id, with: .success([:]), at: Self.at(10))
        // The wall clock is set a day back: it must not matter.
        let now = Moment(uptime: 10 + age, wall: Self.t0.addingTimeInterval(-86_400), random: 0.5)
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

    // MARK: - Configure (T2, D4, R1, A4)

    static func segment(_ id: String) -> Segment { Segment(id: id, segmentationId: "g") }

    /// Runs a whole reload at `seconds`: the debounce fires, the fetch answers `answer`.
    static func reload(_ machine: inout Machine, answering answer: SegmentsByCategory, at seconds: TimeInterval) -> [[String]] {
        if let timer = machine.currentTimer { _ = machine.timerFired(timer, at: at(seconds + 5)) }
        guard let flight = flight(machine) else { return [["no flight"]] }
        return delivered(machine.flightFinished(flight.id, with: .success(answer), at: at(seconds + 6)))
    }

    @Test func d4_aListenerIsToldWhatDiffersFromWhatItWasLastToldEvenWhenTheBaselineEqualsTheAnswer() {
        var machine = Machine(timings: SegmentationTimings())
        _ = machine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in }, group: nil, owner: nil, at: Self.at(0))
        let b = Self.ports("project-b", storage: "folder-b")
        Self.configure(&machine, b)
        _ = Self.request(&machine, at: 1)
        #expect(Self.reload(&machine, answering: [.discovery(): [Self.segment("b1")]], at: 1) == [["b1"]])
        Self.configure(&machine, Self.ports("project-a", storage: "folder-a"), at: 20)
        #expect(Self.reload(&machine, answering: [.discovery(): [Self.segment("a1")]], at: 20) == [["a1"]])
        // Back on B, whose stored baseline already says [b1]: the listener was last told [a1].
        let baselineB = SegmentBaseline(snapshot: SegmentSnapshot(customer: Self.customer, segments: [.discovery(): [Self.segment("b1")]], fetchedAt: Self.t0))
        Self.configure(&machine, b, baseline: baselineB, at: 40)
        #expect(Self.reload(&machine, answering: [.discovery(): [Self.segment("b1")]], at: 40) == [["b1"]])
        // Nothing differs any more: an unchanged answer tells nobody.
        _ = Self.request(&machine, at: 60)
        #expect(Self.reload(&machine, answering: [.discovery(): [Self.segment("b1")]], at: 60) == [])
    }

    @Test func d4_aListenerRegisteredLaterIsNotToldAnUnchangedCategoryButOneToldBeforeHearsItEmptied() {
        var machine = Self.configured()
        _ = Self.request(&machine, at: 1)
        #expect(Self.reload(&machine, answering: [.discovery(): [Self.segment("s1")]], at: 1) == [["s1"]])
        _ = machine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in }, group: nil, owner: nil, at: Self.at(20))
        #expect(Self.reload(&machine, answering: [.discovery(): [Self.segment("s1")]], at: 20) == [])
        _ = Self.request(&machine, at: 40)
        #expect(Self.reload(&machine, answering: [:], at: 40) == [[], []])
    }

    struct Reconfiguration: CustomTestStringConvertible, Sendable {
        let name: String
        let firstLoad: Bool
        let otherIntegration: Bool
        let reloads: Bool
        var testDescription: String { name }
    }

    static let reconfigurations: [Reconfiguration] = [
        Reconfiguration(name: "same integration, no first load", firstLoad: false, otherIntegration: false, reloads: false),
        Reconfiguration(name: "same integration, a kept first-load promise", firstLoad: true, otherIntegration: false, reloads: true),
        Reconfiguration(name: "another integration, no first load", firstLoad: false, otherIntegration: true, reloads: true),
        Reconfiguration(name: "another integration, a kept first-load promise", firstLoad: true, otherIntegration: true, reloads: true),
    ]

    @Test(arguments: reconfigurations)
    func t2_reconfiguringRequestsAReloadForAKeptFirstLoadPromiseOrAnotherIntegration(_ row: Reconfiguration) {
        var machine = Self.configured(firstLoad: row.firstLoad)
        _ = Self.request(&machine, at: 1)
        _ = Self.reload(&machine, answering: [.discovery(): [Self.segment("s1")]], at: 1)
        #expect(Self.describe(machine.reload) == "idle")
        let ports = row.otherIntegration ? Self.ports("project-b", storage: "folder-b") : Self.backend
        let steps = Self.configure(&machine, ports, at: 20)
        #expect(steps.contains("timer(5.0)") == row.reloads)
        #expect(Self.describe(machine.reload) == (row.reloads ? "debouncing(20.0…20.0)" : "idle"))
    }

    /// A → B, then B again before B's baseline is back (an app re-applying its configuration): the
    /// second configure is the same integration as the loading one, but the listeners have not heard
    /// B yet, so the reload the first one owed is still requested (T2, D4).
    @Test func t2_d4_aConfigureOvertakingOneThatChangedIntegrationKeepsItsReload() {
        var machine = Machine(timings: SegmentationTimings())
        _ = machine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in }, group: nil, owner: nil, at: Self.at(0))
        Self.configure(&machine, Self.ports("project-a", storage: "folder-a"))
        _ = Self.request(&machine, at: 1)
        #expect(Self.reload(&machine, answering: [.discovery(): [Self.segment("a1")]], at: 1) == [["a1"]])
        let b = Self.ports("project-b", storage: "folder-b")
        let (outcome, _) = machine.configure(b, namedMode: nil, stored: .some(Self.customer), newCookie: nil, at: Self.at(20))
        #expect(outcome == .configured)
        let steps = Self.configure(&machine, b, at: 21)
        #expect(steps.contains("timer(5.0)"), "no reload requested: \(steps)")
        #expect(Self.reload(&machine, answering: [.discovery(): [Self.segment("b1")]], at: 21) == [["b1"]])
    }

    @Test func r1_theCustomerOfAPendingSaveComesFromMemoryNotFromTheStore() {
        var machine = Machine(timings: SegmentationTimings())
        Self.configure(&machine, customer: nil)  // a fresh install: a new cookie, its save queued
        let made = machine.customer
        #expect(made?.cookie == "new")
        _ = machine.stop()
        // Configured again before the save was written: the store is not asked.
        let (outcome, _) = machine.configure(Self.backend, namedMode: nil, stored: nil, newCookie: nil, at: Self.at(1))
        #expect(outcome == .configured)
        #expect(machine.customer == made)
        // Once written, the store is the truth again.
        _ = machine.customerSaved(in: "folder-a")
        _ = machine.stop()
        let (again, _) = machine.configure(Self.backend, namedMode: nil, stored: nil, newCookie: nil, at: Self.at(2))
        #expect(again == .needsStoredCustomer)
    }

    @Test func a4_anIdentifyIsMergedOnlyIntoTheCustomerItsUpdateWasStampedWith() throws {
        var machine = Self.configured()
        let (before, _) = machine.beginIdentify(hardIds: ["registered": "jane"])
        let stale = try #require(before)
        #expect(stale.stamp.customer.values["registered"] == "jane")
        _ = machine.anonymize(newCookie: "later", at: Self.at(1))
        // Its update was stamped before the anonymize: it came first, and merges nothing now.
        #expect(Self.describe(machine.endIdentify(stale.ticket, queued: true, at: Self.at(2))).isEmpty)
        #expect(machine.customer == CustomerIds(cookie: "later"))
        let (after, _) = machine.beginIdentify(hardIds: ["registered": "jane"])
        let steps = machine.endIdentify(try #require(after).ticket, queued: true, at: Self.at(3))
        #expect(machine.customer?.values["registered"] == "jane")
        #expect(Self.describe(steps) == ["saveCustomer"])  // the reload anonymize asked for is still pending
    }

    /// Issue 32 finding 3: two identify calls made at once were stamped each without the other's
    /// ids and merged in whichever order their updates were written.
    @Test func a4_e1_identifyCallsAreStampedAndMergedInTheOrderTheyWereDecided() throws {
        var machine = Self.configured()
        let (first, _) = machine.beginIdentify(hardIds: ["registered": "jane"])
        let (second, _) = machine.beginIdentify(hardIds: ["email": "j@x"])
        let one = try #require(first), two = try #require(second)
        // Stamped as if made one after the other.
        #expect(one.stamp.customer.values["email"] == nil)
        #expect(two.stamp.customer.values["registered"] == "jane" && two.stamp.customer.values["email"] == "j@x")
        // The second's update is written first: it waits for the first, which merges both.
        #expect(Self.describe(machine.endIdentify(two.ticket, queued: true, at: Self.at(1))).isEmpty)
        #expect(machine.customer?.values["email"] == nil)
        #expect(Self.describe(machine.endIdentify(one.ticket, queued: true, at: Self.at(2))).contains("saveCustomer"))
        #expect(machine.customer?.values["registered"] == "jane" && machine.customer?.values["email"] == "j@x")
        // One whose update was refused merges nothing, and does not hold back the next.
        let (refused, _) = machine.beginIdentify(hardIds: ["phone": "1"])
        let (kept, _) = machine.beginIdentify(hardIds: ["plan": "gold"])
        _ = machine.endIdentify(try #require(kept).ticket, queued: true, at: Self.at(3))
        _ = machine.endIdentify(try #require(refused).ticket, queued: false, at: Self.at(4))
        #expect(machine.customer?.values["phone"] == nil && machine.customer?.values["plan"] == "gold")
    }

    /// Finding 19: a listener tied to an owner that went is gone (M4) when an identify changes the
    /// ids: it asks for no reload (T4), so none is made later only to be skipped "for no callback";
    /// with its owner alive it does.
    @Test func m4_t4_aListenerWhoseOwnerWentAsksNoReloadWhenTheIdsChange() throws {
        final class Owner: Sendable {}
        for ownerKept in [true, false] {
            var machine = Machine(timings: SegmentationTimings())
            var owner: Owner? = Owner()
            _ = machine.addListener(
                SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in }, group: nil, owner: owner, at: Self.at(0))
            Self.configure(&machine)
            if !ownerKept { owner = nil }
            let (begun, _) = machine.beginIdentify(hardIds: ["registered": "jane"])
            let steps = Self.describe(machine.endIdentify(try #require(begun).ticket, queued: true, at: Self.at(1)))
            #expect(steps.contains { $0.hasPrefix("timer(") } == ownerKept, "owner kept: \(ownerKept), \(steps)")
            withExtendedLifetime(owner) {}
        }
    }

    /// Finding 16: an identify decided before a stop whose update is still being written came
    /// first in the one order: the stop merges its ids (saved) and says its update is to be written
    /// though the pipeline stopped; one decided after the stop is refused (not configured).
    @Test func a4_aStopTakesInTheIdentifyDecidedBeforeIt() throws {
        var machine = Self.configured()
        let (begun, _) = machine.beginIdentify(hardIds: ["registered": "jane"])
        let identify = try #require(begun)
        let (_, stopped) = machine.stop()
        let steps = Self.describe(stopped)
        #expect(steps.contains("saveCustomer"), "\(steps)")  // the merged customer
        var control = Self.configured()
        #expect(!Self.describe(control.stop().1).contains("saveCustomer"))  // no identify: nothing to save
        #expect(machine.identifyCameBeforeTheStop(identify.ticket))
        #expect(Self.describe(machine.endIdentify(identify.ticket, queued: true, at: Self.at(1))).isEmpty)  // merged once
        #expect(machine.beginIdentify(hardIds: ["registered": "joe"]).0 == nil)
    }

    @Test func a4_e2_theModeSetLastIsAppliedToTheConfiguredPipelineAndTheNextOne() {
        var machine = Machine(timings: SegmentationTimings())
        #expect(Self.describe(machine.setFlushingMode(.manual)).isEmpty)  // not configured: kept for configure
        let steps = Self.configure(&machine)
        #expect(machine.flushingMode == .manual)
        #expect(!steps.contains("mode(manual)"))  // no pipeline in these ports
    }

    // MARK: - Letting go of the app's objects after the lock (D7)

    /// How many values the steps let go of after the lock.
    static func released(_ steps: some Sequence<Step<Machine.Action>>) -> Int {
        steps.reduce(0) { count, step in if case .release = step { count + 1 } else { count } }
    }

    @Test func d7_everyTransitionThatDropsTheAppsObjectsHandsThemOutToBeReleased() throws {
        var machine = Self.configured()
        let token = machine.addListener(SegmentListener(category: .content(), includeFirstLoad: false) { _ in }, group: nil, owner: nil, at: Self.at(1)).0
        #expect(Self.released(machine.removeListener(token)) == 1)
        #expect(Self.released(machine.removeListener(token)) == 0)  // unknown: nothing
        var owner: NSObject? = NSObject()
        _ = machine.addListener(SegmentListener(category: .content(), includeFirstLoad: false) { _ in }, group: nil, owner: owner, at: Self.at(2))
        owner = nil
        #expect(Self.released(Self.request(&machine, at: 3)) == 1)  // pruned: its registration
        // An owner found alive is held by the look at it: that hold, too, ends after the lock.
        let living = NSObject()
        _ = machine.addListener(SegmentListener(category: .content(), includeFirstLoad: false) { _ in }, group: nil, owner: living, at: Self.at(4))
        #expect(Self.released(machine.timerFired(try #require(machine.currentTimer), at: Self.at(9))) == 1)
        #expect(machine.listenerCount.registered == 2)
        var reconfigured = Machine.Actions()
        (_, reconfigured) = machine.configure(Self.ports("project-b", storage: "folder-b"), namedMode: nil, stored: .some(Self.customer), newCookie: nil, at: Self.at(10))
        #expect(Self.released(reconfigured) == 2)  // the flight in progress, and the previous configuration: ports, pipeline
        #expect(Self.released(machine.stop().1) == 2)  // the configuration, and every listener
    }
}
