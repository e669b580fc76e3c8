// libFuzzer target: the ODP GraphQL answer decoder (Behaviour, wire format, "ODP audiences query").
//
// Properties checked beyond "no crash, no memory error":
// - a rejected body fails with `.invalidIdentifier` or `.invalidResponse` and nothing else;
// - an accepted answer survives a round trip: written back as qualified nodes it decodes to the
//   same names, in the same order.
import Foundation
import SegmentsDomain
@testable import SegmentsNetworking

@_cdecl("LLVMFuzzerTestOneInput")
public func odpDecoderFuzzTarget(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let body = fuzzData(bytes, count)
    let names: [String]
    do {
        names = try ODPResponseDecoder.qualifiedSegments(from: body)
    } catch let error as SegmentsError {
        require(
            error.code == .invalidResponse || error.code == .invalidIdentifier,
            "rejected with \(error.code), not invalidResponse or invalidIdentifier")
        return 0
    } catch {
        fatalError("the decoder threw a non-SegmentsError: \(error)")
    }

    let edges: [JSONValue] = names.map { .object(["node": .object(["name": .string($0), "state": "qualified"])]) }
    let answer: JSONValue = ["data": ["customer": ["audiences": ["edges": .array(edges)]]]]
    guard let encoded = try? JSONEncoder().encode(answer),
        let again = try? ODPResponseDecoder.qualifiedSegments(from: encoded)
    else {
        fatalError("the re-encoded answer is rejected")
    }
    require(again == names, "the round trip changed the qualified names")
    return 0
}
