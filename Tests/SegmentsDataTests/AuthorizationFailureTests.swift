import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// Which upload failures are the backend refusing the credentials, so that the whole queue waits
/// (see Behaviour E3): 401 and 403, or the unauthorized code; no other status.
@Suite(Hang.timeLimit(minutes: 1)) struct AuthorizationFailureTests {
    @Test(arguments: [(401, true), (403, true), (402, false), (400, false), (404, false), (500, false)])
    func e3_onlyA401OrA403IsAnAuthorizationFailure(status: Int, refused: Bool) {
        #expect(SegmentsError(.httpStatus, "status \(status)", httpStatus: status).isAuthorizationFailure == refused)
    }

    @Test func e3_theUnauthorizedCodeIsAnAuthorizationFailure() {
        #expect(SegmentsError(.unauthorized, "refused").isAuthorizationFailure)
        #expect(!SegmentsError(.network, "down").isAuthorizationFailure)
    }
}
