import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The lifecycle's calls made before the first configure (E1 rev 4) and default properties (E8), on
/// the machine alone: what each transition decides.
@Suite(Hang.timeLimit(minutes: 1)) struct WaitingCallsTableTests {
    static let stored = CustomerIds(["cookie": "c0", "registered": "old"])
    static let wall = Date(timeIntervalSince1970: 1_000)

    static func configure(_ lifecycle: inout LifecycleStateMachine, defaults: ConfiguredDefaults? = nil)
        -> (LifecycleStateMachine.Ending?, [String])
    {
        let (outcome, actions, _) = lifecycle.configure(
            SubMachineTableTests.ports("folder-a"), namedMode: nil, stored: .some(stored), newCookie: nil, reload: (false, nil),
            hasListeners: false, namedDefaults: defaults)
        guard case .configured(let ending) = outcome else { return (nil, []) }
        return (ending, SubMachineTableTests.names(actions))
    }

    @Test func e1_e8_configureAppliesTheWaitingCallsInOrderToTheStoredCustomer() throws {
        var lifecycle = LifecycleStateMachine(timings: SegmentationTimings())
        lifecycle.setDefaultProperties(["app": "shop"])
        #expect(lifecycle.hold(HeldCall(.event(type: "a"), properties: ["app": "own"]), at: Self.wall) == .held)
        #expect(lifecycle.hold(HeldCall(.identify(hardIds: ["registered": "jane"]), properties: ["plan": "gold"]), at: Self.wall) == .held)
        #expect(lifecycle.hold(HeldCall(.anonymize(cookie: "n1")), at: Self.wall) == .held)
        #expect(lifecycle.hold(HeldCall(.event(type: "b"), timestamp: Date(timeIntervalSince1970: 5)), at: Self.wall) == .held)

        let (ending, actions) = Self.configure(&lifecycle, defaults: ConfiguredDefaults(properties: nil, forCustomerUpdates: false))
        let replay = try #require(ending?.replay)
        let jane = CustomerIds(["cookie": "c0", "registered": "jane"])
        #expect(replay.items == [
            WaitingItem(kind: .event(type: "a"), properties: ["app": "own"], timestamp: Self.wall, customer: Self.stored),
            WaitingItem(kind: .customerUpdate, properties: ["plan": "gold"], timestamp: Self.wall, customer: jane),
            WaitingItem(kind: .event(type: "b"), properties: ["app": "shop"], timestamp: Date(timeIntervalSince1970: 5), customer: CustomerIds(cookie: "n1")),
        ])
        #expect(lifecycle.customer == CustomerIds(cookie: "n1"))
        #expect(actions == ["saveCustomer(n1)", "saveBaseline", "loadBaseline(1)"], "the anonymize deleted the baseline")
        #expect(lifecycle.holdsCalls, "calls wait until the caller has queued the items")
        #expect(lifecycle.stamp?.holds == true)
        #expect(lifecycle.hold(HeldCall(.event(type: "meanwhile")), at: Self.wall) == .held)

        guard case .items(let next, let changed, _) = lifecycle.nextReplay() else {
            Issue.record("the call made meanwhile is next")
            return
        }
        #expect(next.items.map(\.kind) == [.event(type: "meanwhile")] && !changed)
        guard case .done = lifecycle.nextReplay() else {
            Issue.record("nothing more")
            return
        }
        #expect(!lifecycle.holdsCalls)
        #expect(lifecycle.hold(HeldCall(.event(type: "later")), at: Self.wall) == .configured)
    }

    @Test func e1_the1001stCallIsRefusedAndAStopDropsThemWithAWarning() {
        var lifecycle = LifecycleStateMachine(timings: SegmentationTimings())
        for _ in 0..<1_000 { #expect(lifecycle.hold(HeldCall(.event(type: "e")), at: Self.wall) == .held) }
        #expect(lifecycle.hold(HeldCall(.event(type: "e")), at: Self.wall) == .full)
        let (_, actions, _) = lifecycle.end()
        #expect(SubMachineTableTests.names(actions) == ["log(warning)"])
        #expect(lifecycle.hold(HeldCall(.event(type: "e")), at: Self.wall) == .stopped)
        let (ending, _) = Self.configure(&lifecycle)
        #expect(ending != nil && ending?.replay == nil, "nothing waits after a stop")
    }
}
