import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// The XDG data home is a directory URL either way (see Behaviour P1): folders appended to it
/// stay inside it.
@Suite(Hang.timeLimit(minutes: 1)) struct DataHomeURLTests {
    @Test(arguments: [["XDG_DATA_HOME": "/data/me"], [:]])
    func p1_theDataHomeIsADirectoryURL(environment: [String: String]) {
        let home = StorageLocation.dataHome(environment: environment, homeDirectory: "/home/me")
        #expect(home.hasDirectoryPath)
    }
}
