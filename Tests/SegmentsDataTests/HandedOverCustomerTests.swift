import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The customer handed over with a storage folder by its previous owner of this process, whose
/// save of it may still be queued on that owner's storage queue, is the truth for the folder
/// until this client's storage queue has waited for those writes — for the configuration that
/// took it over, and for a later configure of the same client after a stop (issue 32, finding 18;
/// see Behaviour P5, R1, A3).
@Suite(Hang.timeLimit(minutes: 1)) struct HandedOverCustomerTests {
    typealias Table = SubMachineTableTests

    static let handedOver = CustomerIds(["cookie": "c0", "registered": "u2"])

    /// The ports of a client that takes "folder-a" over from another client of the process.
    static func takingOver() -> SegmentationEngine.Ports {
        var ports = Table.ports("folder-a")
        ports.handedOverCustomer = handedOver
        return ports
    }

    /// A configure of "folder-a" as after a stop of this client: the registry hands over nothing
    /// (the folder's last owner was this client). Returns the outcome and the customer.
    static func configureAgain(_ lifecycle: inout LifecycleStateMachine) -> (String, CustomerIds?) {
        let (outcome, _, _) = lifecycle.configure(
            Table.ports("folder-a"), namedMode: nil, stored: nil, newCookie: nil, reload: (false, nil), hasListeners: false)
        switch outcome {
        case .configured: return ("configured", lifecycle.customer)
        case .needsStoredCustomer: return ("needs the stored customer", nil)
        case .needsNewCookie: return ("needs a cookie", nil)
        }
    }

    @Test func p5_r1_aStoppedClientConfiguredAgainKeepsTheHandedOverCustomerWhileItsSaveIsQueued() {
        var lifecycle = LifecycleStateMachine(timings: SegmentationTimings())
        let (outcome, actions, _) = lifecycle.configure(
            Self.takingOver(), namedMode: nil, stored: nil, newCookie: nil, reload: (false, nil), hasListeners: false)
        #expect(outcome == .configured)
        #expect(lifecycle.customer == Self.handedOver)
        // Reported back from the storage queue, behind the previous owner's writes.
        #expect(Table.names(actions).contains("handedOverCustomerWritten(folder-a)"))
        _ = lifecycle.end()

        // The previous owner's save is still queued: the file holds an older customer, which a
        // read of the store would answer.
        let again = Self.configureAgain(&lifecycle)
        #expect(again.0 == "configured")
        #expect(again.1 == Self.handedOver)
    }

    @Test func p5_r1_onceThePreviousOwnersWritesAreDoneTheFileIsTheTruthAgain() {
        var lifecycle = LifecycleStateMachine(timings: SegmentationTimings())
        _ = lifecycle.configure(Self.takingOver(), namedMode: nil, stored: nil, newCookie: nil, reload: (false, nil), hasListeners: false)
        lifecycle.customerSaved(in: "folder-a")  // the storage queue waited for them
        _ = lifecycle.end()
        #expect(Self.configureAgain(&lifecycle).0 == "needs the stored customer")
    }

    /// A stop that deletes the stored data still starts a new customer (A3), handed over or not.
    @Test func a3_p5_aStopThatDeletesTheDataForgetsTheHandedOverCustomer() {
        var lifecycle = LifecycleStateMachine(timings: SegmentationTimings())
        _ = lifecycle.configure(Self.takingOver(), namedMode: nil, stored: nil, newCookie: nil, reload: (false, nil), hasListeners: false)
        _ = lifecycle.endErasing(completion: nil, defaultStorage: nil)
        let (outcome, _, _) = lifecycle.configure(
            Table.ports("folder-a"), namedMode: nil, stored: nil, newCookie: "n1", reload: (false, nil), hasListeners: false)
        #expect(outcome == .configured)
        #expect(lifecycle.customer == CustomerIds(cookie: "n1"))
    }
}
