import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// Qualified leaves are found inside an object's fields too, not only in arrays (see Behaviour
/// O1): a condition object may hold further conditions as field values.
@Suite(Hang.timeLimit(minutes: 1)) struct ODPDatafileNestingTests {
    @Test func o1_aQualifiedLeafInsideAnObjectsFieldIsACandidate() throws {
        let leaf = #"{"value":"seg-inner","type":"third_party_dimension","name":"odp.audiences","match":"qualified"}"#
        let conditions = #"["or", {"match":"custom","value":"outer","conditions":\#(leaf),"more":[\#(leaf.replacingOccurrences(of: "seg-inner", with: "seg-listed"))]}]"#
        let datafile = Data(#"{"version":"4","typedAudiences":[{"id":"1","name":"a","conditions":\#(conditions)}]}"#.utf8)
        #expect(try ODPDatafile.candidateSegments(from: datafile) == ["seg-inner", "seg-listed"])
    }
}
