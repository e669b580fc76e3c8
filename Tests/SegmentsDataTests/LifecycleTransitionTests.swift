import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// Transitions of the lifecycle machine alone that the table of ``SubMachineTableTests`` leaves
/// out: what a configure over a loading one keeps (T5, T6), the T8 warning across configures, the
/// age of a reloaded baseline this process fetched (T10), a stored customer adopted (P8), the
/// identify and stop bookkeeping (A3, A4, E1), and a held anonymize replayed (E1).
@Suite(Hang.timeLimit(minutes: 1)) struct LifecycleTransitionTests {
    typealias Table = SubMachineTableTests
    static let now = Moment(uptime: 100, wall: Date(timeIntervalSince1970: 1_700_000_000), random: 0.5)

    static func configure(
        _ lifecycle: inout LifecycleStateMachine, storage: String? = "folder-a", stored: CustomerIds?? = nil, newCookie: String? = nil,
        reload: (owed: Bool, burstStarted: TimeInterval?) = (false, nil), hasListeners: Bool = false
    ) -> [String] {
        let (_, actions, _) = lifecycle.configure(
            Table.ports(storage), namedMode: nil, stored: stored, newCookie: newCookie, reload: reload, hasListeners: hasListeners)
        return Table.names(actions)
    }

    @Test func t5_t6_aConfigureOverALoadingOneKeepsItsOwedReloadAndItsBurst() {
        var lifecycle = Table.running()
        _ = Self.configure(&lifecycle, reload: (false, 12))  // load 2, a burst that started at 12
        lifecycle.oweReload()  // a reload asked for while it loads
        _ = Self.configure(&lifecycle)  // load 3, before load 2 came in: nothing pending of its own
        let (loaded, _) = lifecycle.baselineLoaded(3, .empty)
        #expect(loaded?.reloadOwed == true, "the reload owed by the overtaken load is owed still")
        #expect(loaded?.burstStarted == 12, "the burst of the overtaken load goes on")
    }

    @Test func t8_theWarningIsGivenOnceAcrossAReconfigureInTheSameMode() {
        var lifecycle = Table.running()
        #expect(Table.names(lifecycle.setFlushingMode(.periodic(seconds: 10), hasListeners: true)).contains("log(warning)"))
        let actions = Self.configure(&lifecycle, hasListeners: true)
        #expect(!actions.contains("log(warning)"), "warned already: \(actions)")
    }

    @Test func t10_aReloadedBaselineThisProcessFetchedAgesOnTheMonotonicClock() throws {
        var lifecycle = Table.running()
        let segments: SegmentsByCategory = [.content(): [Segment(id: "s", segmentationId: "g")]]
        let fetched = lifecycle.fetched(segments, for: Table.customer, at: Self.now)
        let (_, actions) = try #require(fetched)
        guard case .saveBaseline(let baseline, _)? = actions.first else {
            Issue.record("no baseline saved: \(Table.names(actions))")
            return
        }
        _ = Self.configure(&lifecycle)  // the same storage and integration: load 2
        _ = lifecycle.baselineLoaded(2, baseline)  // what was saved, loaded back
        #expect(lifecycle.running?.snapshotUptime == Self.now.uptime)
        // Its age is known on the monotonic clock: no wall clock is needed to answer.
        guard case .answer(let answer) = lifecycle.cacheHit(.content(), uptime: Self.now.uptime + 1, wall: nil) else {
            Issue.record("the cache did not answer from the monotonic age")
            return
        }
        #expect(answer == segments[.content()])
    }

    @Test func p8_aStoredCustomerAdoptedIsLoggedAsAWarning() {
        var lifecycle = LifecycleStateMachine(timings: SegmentationTimings())
        // The customer file was refused: configure made a customer (m1).
        _ = Self.configure(&lifecycle, stored: .some(nil), newCookie: "m1")
        #expect(lifecycle.customer?.cookie == "m1")
        let (adopted, actions) = lifecycle.storedCustomerRead(CustomerIds(cookie: "s1"), in: "folder-a")
        #expect(adopted)
        #expect(lifecycle.customer?.cookie == "s1")
        #expect(Table.names(actions) == ["log(warning)"])
    }

    @Test func a4_e1_anIdentifyTicketNotPendingChangesNothing() {
        var lifecycle = Table.running()
        let (changed, actions) = lifecycle.endIdentify(42, queued: true)
        #expect(!changed)
        #expect(actions.isEmpty)
    }

    @Test func t11_a1_anAnonymizeForgetsWhenTheSegmentsWereFetched() {
        var lifecycle = Table.running()
        let fetched = lifecycle.fetched([.content(): []], for: Table.customer, at: Self.now)
        #expect(fetched != nil)
        #expect(lifecycle.running?.snapshotUptime == Self.now.uptime)
        _ = lifecycle.anonymize(newCookie: "n1")
        #expect(lifecycle.running?.snapshotUptime == nil, "no reload for the new customer yet: a return to the foreground finds it stale")
    }

    @Test func a3_a5_aStopWithoutDeletionAfterAStopCallsItsCompletionAfterTheDiskWork() {
        var lifecycle = Table.running()
        _ = lifecycle.end()
        let (_, actions, _) = lifecycle.endErasing(completion: {}, defaultStorage: nil)
        #expect(Table.names(actions) == ["completeAfterStorageWork(1)"])
        let (_, none, _) = lifecycle.endErasing(completion: nil, defaultStorage: nil)
        #expect(Table.names(none).isEmpty, "no completion: nothing to call")
    }

    @Test func a3_theDeletionDoneCallsTheStopsCompletion() {
        var lifecycle = Table.running()
        let (_, actions, _) = lifecycle.endErasing(completion: {}, defaultStorage: nil)
        #expect(Table.names(actions) == ["erase(1)"], "no pipeline: the deletion is queued at once")
        #expect(lifecycle.erasurePending)
        #expect(Table.names(lifecycle.erased(1)) == ["writesQueued", "complete(1)"])
        #expect(!lifecycle.erasurePending)
    }

    @Test func e1_anAnonymizeHeldWhileTheWaitingCallsAreQueuedIsCarriedOutInItsPlace() {
        var lifecycle = LifecycleStateMachine(timings: SegmentationTimings())
        #expect(lifecycle.hold(HeldCall(.event(type: "a")), at: Self.now.wall) == .held)
        _ = Self.configure(&lifecycle, stored: .some(Table.customer))
        #expect(lifecycle.holdsCalls)
        #expect(lifecycle.hold(HeldCall(.anonymize(cookie: "n2")), at: Self.now.wall) == .held)
        guard case .anonymize(let cookie) = lifecycle.nextReplay() else {
            Issue.record("the held anonymize is not next")
            return
        }
        #expect(cookie == "n2")
    }
}
