import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// An eraser that counts its calls (see Behaviour A3).
final class CountingEraser: StoredDataEraser {
    private let calls = Locked(0)
    var count: Int { calls.value }
    func erase(queuedItems: [TrackedEvent.ID]) { calls.withLock { $0 += 1 } }
}

/// A redo that finds nothing (see Behaviour P8).
struct NothingToRedo: RefusedStorageRedo {
    func redo() -> RefusedStorageRedone { RefusedStorageRedone(customer: .notRead, items: []) }
}

/// Decisions of the client's machine (and of its parts) that the other table tests leave open:
/// logs, the steps of a stop that deletes the stored data, boundaries of the foreground refresh and
/// of the retry chain, and the listener index after compactions (see Behaviour A3, T7, T8, T11, D1,
/// D7, E1, M4, P8).
@Suite(Hang.timeLimit(minutes: 1)) struct SegmentationSurvivorTests {
    typealias Machine = SegmentationStateMachine
    typealias Fixtures = SegmentationStateMachineTests

    static func ports(
        storage: String? = "folder-a", eraser: (any StoredDataEraser)? = nil, redo: (any RefusedStorageRedo)? = nil
    ) -> SegmentationEngine.Ports {
        SegmentationEngine.Ports(
            repository: RecordingSegmentRepository(), customerStore: RecordingCustomerStore(),
            baselineStore: RecordingSegmentBaselineStore(), integrationID: "project-a", storageID: storage,
            handOver: RecordingStorageHandOver(), refusedStorageRedo: redo, eraser: eraser)
    }

    /// The log lines of `steps`, the lifecycle's included.
    static func logs(_ steps: some Sequence<Step<Machine.Action>>) -> [String] {
        steps.compactMap { step -> String? in
            switch step {
            case .perform(.log(let level, let message)), .perform(.lifecycle(.log(let level, let message))): "\(level): \(message)"
            default: nil
            }
        }
    }

    // MARK: - Stop (A3, D7)

    @Test func a3_aStopWithAReloadPendingSaysItWasCancelledAndOneWithNothingPendingDoesNot() {
        var pending = Fixtures.configured()
        _ = Fixtures.request(&pending, at: 0)
        let cancelled = "\(LogLevel.verbose): \(SegmentsLogText.cancelledMeanwhile)"
        #expect(Self.logs(pending.stop().1).contains(cancelled))
        var idle = Fixtures.configured()
        #expect(!Self.logs(idle.stop().1).contains(cancelled))
    }

    @Test func a3_aStopDeletesTheBaseline() {
        var machine = Fixtures.configured()
        #expect(Fixtures.describe(machine.stop().1).contains("saveBaseline"))
    }

    @Test func a3_d7_aStopThatDeletesTheStoredDataHandsTheConfigurationAndListenersOutToBeReleased() {
        var machine = Fixtures.configured()
        #expect(Fixtures.released(machine.stop(erasing: true).1) == 2)  // the configuration, and every listener
    }

    @Test func a3_aStopThatDeletesTheStoredDataErasesWithTheConfigurationsEraserAndCompletesWhenErased() throws {
        var machine = Machine(timings: SegmentationTimings())
        let eraser = CountingEraser()
        Fixtures.configure(&machine, Self.ports(eraser: eraser))
        let (_, steps) = machine.stop(erasing: true, completion: {})
        let erasures = steps.compactMap { step -> (Int, (any StoredDataEraser)?)? in
            if case .perform(.lifecycle(.erase(let id, let eraser, _))) = step { (id, eraser) } else { nil }
        }
        let erasure = try #require(erasures.first)
        #expect(erasures.count == 1)
        #expect((erasure.1 as? CountingEraser) === eraser)
        #expect(machine.erasurePending)
        #expect(Fixtures.describe(machine.erased(erasure.0)) == ["storageWritesQueued", "complete(1)"])
        #expect(!machine.erasurePending)
    }

    // MARK: - Protected data (P8)

    @Test func p8_protectedDataBecomingAvailableRedoesWithTheConfigurationsRedo() {
        var machine = Machine(timings: SegmentationTimings())
        Fixtures.configure(&machine, Self.ports(redo: NothingToRedo()))
        #expect(Fixtures.describe(machine.protectedDataBecameAvailable()) == ["redoRefusedStorage"])
    }

    @Test func p8_aStoredCustomerReadLateIsAdoptedWithAWarningOrTheCurrentOneIsSavedOverIt() {
        var adopting = Machine(timings: SegmentationTimings())
        Fixtures.configure(&adopting, customer: nil)  // the customer made at configure, for lack of the file
        let adopted = adopting.storedCustomerRead(CustomerIds(cookie: "stored"), in: "folder-a", at: Fixtures.at(1))
        #expect(Self.logs(adopted).contains("\(LogLevel.warning): \(SegmentsLogText.storedCustomerAdopted)"))
        #expect(adopting.customer == CustomerIds(cookie: "stored"))
        var keeping = Machine(timings: SegmentationTimings())
        Fixtures.configure(&keeping, customer: nil)
        #expect(Fixtures.describe(keeping.storedCustomerRead(nil, in: "folder-a", at: Fixtures.at(1))) == ["saveCustomer"])
    }

    // MARK: - A customer without a cookie (C5)

    @Test func c5_aCustomerWithoutACookieIsNeverFetchedForAndTheFailureIsLogged() {
        var machine = Fixtures.configured()
        _ = machine.anonymize(newCookie: "", at: Fixtures.at(1))
        let (_, actions) = machine.read(.discovery(), force: true, reply: .direct { _ in }, at: Fixtures.at(2))
        #expect(!Fixtures.describe(actions).contains("fetch"))
        #expect(Fixtures.describe(actions).contains("answer(1, failure)"))
        let error = SegmentsError(.missingCookie, "the customer has no cookie")
        #expect(Self.logs(actions).contains("\(LogLevel.warning): \(SegmentsLogText.fetchFailed(error))"))
    }

    // MARK: - Baseline (D1)

    @Test func d1_aBaselineOfAnotherIntegrationIsNotUsedAndSaysSo() throws {
        var machine = Machine(timings: SegmentationTimings())
        let (_, steps) = machine.configure(
            Self.ports(), namedMode: nil, stored: .some(Fixtures.customer), newCookie: nil, at: Fixtures.at(0))
        let load = try #require(
            steps.compactMap { step -> Int? in
                if case .perform(.lifecycle(.loadBaseline(let id, _))) = step { id } else { nil }
            }.first)
        let other = SegmentBaseline(snapshot: nil, linkedCustomers: [], integration: "project-b")
        let loaded = machine.baselineLoaded(load, other, at: Fixtures.at(0))
        #expect(Self.logs(loaded).contains("\(LogLevel.verbose): \(SegmentsLogText.baselineOfAnotherIntegration)"))
    }

    // MARK: - Failures and retries (D9, L2, T4, T7, G6)

    @Test func d9_l2_aFailedFetchIsLoggedAsAWarning() throws {
        var machine = Fixtures.fetching()
        let flight = try #require(Fixtures.flight(machine))
        let actions = machine.flightFinished(flight.id, with: .failure(Fixture.permanent), at: Fixtures.at(7))
        #expect(Self.logs(actions).contains("\(LogLevel.warning): \(SegmentsLogText.fetchFailed(Fixture.permanent))"))
    }

    @Test func t4_t7_newIdsEndTheOldIdsBackoff() throws {
        var machine = Fixtures.fetching()
        let flight = try #require(Fixtures.flight(machine))
        _ = machine.flightFinished(flight.id, with: .failure(Fixture.transient), at: Fixtures.at(7))
        #expect(Fixtures.describe(machine.reload) == "retrying(1)")
        let (identify, _) = machine.beginIdentify(hardIds: ["registered": "jane"])
        let actions = machine.endIdentify(try #require(identify).ticket, queued: true, at: Fixtures.at(8))
        #expect(Fixtures.describe(actions) == ["saveCustomer", "cancelTimer", "timer(5.0)"])
    }

    @Test func g6_t7_theFlightRetriedForTheNewCustomerStartsANewRetryChain() throws {
        var machine = Fixtures.fetching()
        let flight = try #require(Fixtures.flight(machine))
        _ = machine.read(.discovery(), force: true, reply: .direct { _ in }, at: Fixtures.at(6))
        let (identify, _) = machine.beginIdentify(hardIds: ["registered": "jane"])
        _ = machine.endIdentify(try #require(identify).ticket, queued: true, at: Fixtures.at(6))
        _ = machine.flightFinished(flight.id, with: .success([:]), at: Fixtures.at(7))
        let retried = try #require(Fixtures.flight(machine))
        #expect(retried.id != flight.id)
        let actions = machine.flightFinished(retried.id, with: .failure(Fixture.transient), at: Fixtures.at(8))
        #expect(Fixtures.describe(actions).contains("timer(2.0)"))  // the first attempt's delay
        #expect(Fixtures.describe(machine.reload) == "retrying(1)")
    }

    // MARK: - Flushing mode warning (T8)

    @Test func t8_theFirstListenerOfAClientThatDoesNotFlushImmediatelyIsWarned() {
        var machine = Machine(timings: SegmentationTimings())
        Fixtures.configure(&machine)
        #expect(Self.logs(machine.setFlushingMode(.manual)).isEmpty)  // no listener yet
        let (_, actions) = machine.addListener(
            SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in }, group: nil, owner: nil, at: Fixtures.at(1))
        #expect(Self.logs(actions).contains("\(LogLevel.warning): \(SegmentsLogText.flushingNotImmediate)"))
    }

    // MARK: - Foreground refresh (T11)

    @Test func t11_segmentsExactlyTheRefreshAgeOldAreNotReloadedOnReturn() throws {
        var machine = Fixtures.fetching()
        let flight = try #require(Fixtures.flight(machine))
        _ = machine.flightFinished(flight.id, with: .success([.discovery(): []]), at: Fixtures.at(7))
        let age = SegmentationTimings().foregroundRefreshAge
        #expect(Fixtures.describe(machine.appWillEnterForeground(at: Fixtures.at(7 + age))).isEmpty)
        #expect(Fixtures.describe(machine.reload) == "idle")
        #expect(Fixtures.describe(machine.appWillEnterForeground(at: Fixtures.at(8 + age))) == ["timer(5.0)"])
    }

    // MARK: - Calls made before configure (E1)

    @Test func e1_aStopWhileTheFirstConfiguresCallerQueuesLetsTheNextConfigurationTrackAsUsual() {
        var lifecycle = LifecycleStateMachine(timings: SegmentationTimings())
        #expect(lifecycle.hold(HeldCall(.event(type: "a")), at: WaitingCallsTableTests.wall) == .held)
        _ = WaitingCallsTableTests.configure(&lifecycle)
        #expect(lifecycle.holdsCalls)  // its caller queues the items
        _ = lifecycle.end()
        _ = WaitingCallsTableTests.configure(&lifecycle)
        #expect(!lifecycle.holdsCalls)
        #expect(lifecycle.hold(HeldCall(.event(type: "b")), at: WaitingCallsTableTests.wall) == .configured)
    }

    @Test func e1_callsWithoutAnAnonymizeLeaveTheCustomerNotAnonymized() {
        let wall = WaitingCallsTableTests.wall
        let calls = [HeldCall(.event(type: "a"), timestamp: wall), HeldCall(.identify(hardIds: ["registered": "jane"]), timestamp: wall)]
        let applied = WaitingCalls.apply(calls, to: WaitingCallsTableTests.stored, defaults: DefaultProperties())
        #expect(!applied.anonymized)
        let anonymizing = WaitingCalls.apply(
            calls + [HeldCall(.anonymize(cookie: "n1"), timestamp: wall)], to: WaitingCallsTableTests.stored, defaults: DefaultProperties())
        #expect(anonymizing.anonymized)
    }

    // MARK: - The listener index (M4, D7)

    @Test func m4_d7_theLastListenerOfACategoryLeftAfterCompactionsIsStillTold() {
        var registry = ListenerRegistry()
        let calls = Locked<[Int]>([])
        let tokens = (0..<4).map { registry.add(ListenerRegistryTests.listener(.discovery(), $0, into: calls), group: nil, owner: nil) }
        for token in tokens.prefix(3) { _ = registry.remove(token) }
        var deliveries: [Delivery] = []
        registry.tell([], to: .discovery(), changed: true, firstLoad: false, into: &deliveries)
        deliveries.forEach { $0.run() }
        #expect(calls.value == [3])
    }
}

/// The engine's lifecycle calls that reach the machine (see Behaviour A3, T11).
@Suite(Hang.timeLimit(minutes: 1)) struct SegmentationEngineSurvivorTests {
    @Test func a3_stopErasingDeletesTheStoredData() async {
        let harness = EngineHarness()
        let eraser = CountingEraser()
        harness.engine.configure(
            SegmentationEngine.Ports(
                repository: harness.repository, customerStore: harness.customerStore, baselineStore: harness.baselineStore,
                storageID: "folder-a", eraser: eraser))
        harness.drainDeliveries()
        harness.engine.stopErasing()
        harness.drainDeliveries()
        #expect(eraser.count == 1)
    }

    @Test func t11_returningToTheForegroundReloadsForListeners() async {
        let harness = EngineHarness()
        harness.listen()
        harness.configure()
        await harness.advance(by: 10)
        #expect(harness.fetchCount == 0)  // no first load asked
        harness.engine.appLifecycleChanged(.willEnterForeground, lifecycle: ManualAppLifecycle())
        await harness.advance(by: 10)
        #expect(harness.fetchCount == 1)
    }
}
