import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The client machine and the network path, driven directly (Behaviour N1, N2): each transition is
/// checked for the reload state it leaves and the steps it returns, as in
/// `SegmentationStateMachineTests`, whose fixtures these use.
@Suite(Hang.timeLimit(minutes: 1)) struct NetworkPathMachineTests {
    typealias Machine = SegmentationStateMachine
    typealias Fixtures = SegmentationStateMachineTests

    static let busy = SegmentsError(.httpStatus, "busy", httpStatus: 503)

    static func offline(_ machine: inout Machine, at seconds: TimeInterval) -> [String] {
        Fixtures.describe(machine.networkPathChanged(.unusable, at: Fixtures.at(seconds)))
    }

    static func online(_ machine: inout Machine, at seconds: TimeInterval) -> [String] {
        Fixtures.describe(machine.networkPathChanged(.usable, at: Fixtures.at(seconds)))
    }

    /// A machine whose automatic reload failed transiently at 7 s: retrying(1), its timer due at 9 s.
    static func retrying() throws -> Machine {
        var machine = Fixtures.fetching()
        let flight = try #require(Fixtures.flight(machine))
        _ = machine.flightFinished(flight.id, with: .failure(busy), at: Fixtures.at(7))
        #expect(Fixtures.describe(machine.reload) == "retrying(1)")
        return machine
    }

    @Test func n1_goingOfflineDeliversNothingAndStartsNothing() {
        var machine = Fixtures.configured()
        #expect(Self.offline(&machine, at: 1).isEmpty)
        #expect(machine.networkPath == .unusable)
        #expect(Self.offline(&machine, at: 2).isEmpty, "a repeated report changes nothing")
    }

    @Test func n1_offlineADueReloadStartsNoFetchAndWaitsForThePath() throws {
        var machine = Fixtures.configured()
        _ = Self.offline(&machine, at: 0)
        _ = Fixtures.request(&machine, at: 0)
        let timer = try #require(machine.currentTimer)
        #expect(Fixtures.describe(machine.timerFired(timer, at: Fixtures.at(5))).isEmpty)
        #expect(Fixtures.describe(machine.reload) == "waitingForPath(0)")
        #expect(machine.currentTimer == nil)
    }

    @Test func n1_aBackoffFiringOfflineStartsNoAttemptAndGrowsNothing() throws {
        var machine = try Self.retrying()
        _ = Self.offline(&machine, at: 8)
        let timer = try #require(machine.currentTimer)
        #expect(Fixtures.describe(machine.timerFired(timer, at: Fixtures.at(9))).isEmpty)
        #expect(Fixtures.describe(machine.reload) == "waitingForPath(1)")
        // Back online, the reload starts at once, one retry into its chain: the next failure waits
        // 4 s, as it would have without the offline stretch.
        #expect(Self.online(&machine, at: 20) == ["fetch"])
        let flight = try #require(Fixtures.flight(machine))
        #expect(flight.retryAttempt == 1)
        #expect(Fixtures.describe(machine.flightFinished(flight.id, with: .failure(Self.busy), at: Fixtures.at(21))) == ["timer(4.0)"])
    }

    @Test func n1_aTransientFailureOfflineCountsNoRetry() throws {
        var machine = Fixtures.fetching()
        let flight = try #require(Fixtures.flight(machine))
        _ = Self.offline(&machine, at: 6)
        #expect(Fixtures.describe(machine.flightFinished(flight.id, with: .failure(Self.busy), at: Fixtures.at(7))).isEmpty)
        #expect(Fixtures.describe(machine.reload) == "waitingForPath(0)")
    }

    @Test func n1_aReadThatNeedsTheNetworkFailsAtOnceWithTheOfflineReason() throws {
        var machine = Fixtures.configured(firstLoad: true)
        _ = Self.offline(&machine, at: 0)
        let answers = Recorder<Result<[Segment], SegmentsError>>()
        let (_, actions) = machine.read(.discovery(), force: true, reply: .direct { answers.record($0) }, at: Fixtures.at(1))
        #expect(Fixtures.describe(actions) == ["answer(1, failure)"])
        for step in actions {
            if case .perform(.reads(.answer(let reads, let result))) = step {
                for read in reads { if case .direct(let resume) = read.reply { resume(result.map { $0[read.category] ?? [] }) } }
            }
        }
        guard case .failure(let error)? = answers.last else { Issue.record("not answered with a failure"); return }
        #expect(error.reason == .offline)
        #expect(Fixtures.describe(machine.reload) == "debouncing(0.0…0.0)", "the listeners' pending reload is not absorbed by the read")
    }

    @Test func n1_g1_aReadTheCacheAnswersIsStillAnsweredOffline() throws {
        var machine = Fixtures.fetching()
        let flight = try #require(Fixtures.flight(machine))
        _ = machine.flightFinished(flight.id, with: .success([.discovery(): []]), at: Fixtures.at(10))
        _ = Self.offline(&machine, at: 11)
        let (_, actions) = machine.read(.discovery(), force: false, reply: .direct { _ in }, at: Fixtures.at(12))
        #expect(Fixtures.describe(actions) == ["answer(1, success)"])
    }

    @Test func n2_thePathsReturnCutsABackoffShort() throws {
        var machine = try Self.retrying()
        _ = Self.offline(&machine, at: 8)
        #expect(Self.online(&machine, at: 8.5) == ["cancelTimer", "fetch"])
        #expect(Fixtures.describe(machine.reload) == "fetching(forListeners: true, owed: false)")
    }

    @Test(arguments: [(30.0, false), (70.0, true)])
    func n2_t11_thePathsReturnRequestsAReloadWhenSegmentsAreOlderThanTheRefreshAge(returnAt: TimeInterval, reloads: Bool) throws {
        var machine = Fixtures.fetching()
        let flight = try #require(Fixtures.flight(machine))
        _ = machine.flightFinished(flight.id, with: .success([.discovery(): []]), at: Fixtures.at(7))
        _ = Self.offline(&machine, at: 8)
        #expect(Self.online(&machine, at: returnAt) == (reloads ? ["timer(5.0)"] : []))
        #expect(Fixtures.describe(machine.reload) == (reloads ? "debouncing(\(returnAt)…\(returnAt))" : "idle"))
    }

    @Test func n2_r3_aPathThatReturnsWhileTheBaselineLoadsOwesListenersAReload() {
        var machine = Machine(timings: SegmentationTimings())
        _ = machine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: false) { _ in }, group: nil, owner: nil, at: Fixtures.at(0))
        _ = machine.networkPathChanged(.unusable, at: Fixtures.at(0))
        var (outcome, steps) = machine.configure(Fixtures.backend, namedMode: nil, stored: nil, newCookie: nil, at: Fixtures.at(0))
        if outcome != .configured {
            (outcome, steps) = machine.configure(
                Fixtures.backend, namedMode: nil, stored: .some(Fixtures.customer), newCookie: "new", at: Fixtures.at(0))
        }
        let load = steps.compactMap { step -> Int? in
            if case .perform(.lifecycle(.loadBaseline(let id, _))) = step { id } else { nil }
        }
        _ = Self.online(&machine, at: 1)
        // No listener asked for a first load: without the path's return, nothing would be reloaded.
        let loaded = Fixtures.describe(machine.baselineLoaded(load.first ?? -1, .empty, at: Fixtures.at(2)))
        #expect(loaded == ["timer(5.0)"])
    }

    @Test func n2_withoutListenersThePathsReturnRequestsNoReload() {
        var machine = Machine(timings: SegmentationTimings())
        Fixtures.configure(&machine)
        _ = Self.offline(&machine, at: 1)
        #expect(Self.online(&machine, at: 100).isEmpty)
        #expect(Fixtures.describe(machine.reload) == "idle")
    }

    @Test func n1_a4_aConfigureOfflineTellsTheNewPipelineBeforeItStartsLoading() {
        var machine = Machine(timings: SegmentationTimings())
        _ = machine.networkPathChanged(.unusable, at: Fixtures.at(0))
        let pipeline = TrackingPipeline(
            dependencies: .init(client: ClientPorts(runtime: SegmentsRuntime(scheduler: TestScheduler()))), store: RecordingEventQueueStore(),
            uploader: RecordingEventUploader(), mode: .manual, loadsAtOnce: false, onItemUploaded: {})
        let steps = Fixtures.configure(&machine, Fixtures.ports(tracking: pipeline))
        let path = steps.firstIndex(of: "trackingPath(unusable)")
        let start = steps.firstIndex(of: "startTracking")
        #expect(path != nil && start != nil)
        if let path, let start { #expect(path < start) }
        // Back online, the pipeline is told, in the client's order.
        #expect(Self.online(&machine, at: 1).contains("trackingPath(usable)"))
    }
}
