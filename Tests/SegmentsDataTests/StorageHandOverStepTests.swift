import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// Re-configuring hands the old storage over (its folder's owner lock, with the customer it ended
/// with) exactly when the storage changes (see Behaviour P5, A4), driven on the state machine.
@Suite(Hang.timeLimit(minutes: 1)) struct StorageHandOverStepTests {
    typealias Base = SegmentationStateMachineTests

    /// The steps of re-configuring a configured machine with `storage`, in words.
    private func reconfigure(storage: String?) -> [String] {
        var machine = Base.configured()
        let ports = Base.ports(storage: storage)
        var (outcome, steps) = machine.configure(ports, namedMode: nil, stored: nil, newCookie: nil, at: Base.at(1))
        if outcome != .configured {  // the new storage's customer is read first
            (outcome, steps) = machine.configure(ports, namedMode: nil, stored: .some(Base.customer), newCookie: "new", at: Base.at(1))
        }
        #expect(outcome == .configured)
        return Base.describe(steps)
    }

    @Test func p5_a4_anotherFolderEndsTheOldConfiguration() {
        #expect(reconfigure(storage: "folder-b").contains("end"))
    }

    @Test func p5_a4_leavingAFolderForMemoryEndsTheOldConfiguration() {
        #expect(reconfigure(storage: nil).contains("end"))
    }

    @Test func p5_a4_theSameFolderIsKept() {
        #expect(!reconfigure(storage: "folder-a").contains("end"))
    }
}
