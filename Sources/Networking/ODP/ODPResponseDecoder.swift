import Foundation
import SegmentsDomain

/// Decoding of a 2xx GraphQL answer (WIRE.md "ODP"), strictly: anything but the documented shapes
/// is a failed fetch, never "no segments".
///
/// - `errors` present and not empty: an invalid identifier (current or legacy form) throws
///   `.invalidIdentifier`; any other error throws `.invalidResponse` with an ``ODPGraphQLError``
///   carrying the classification as the underlying error.
/// - `data.customer` is `null`: an unknown user, `[]`.
/// - otherwise `data.customer.audiences.edges[].node {name state}` must be there: the names whose
///   state is `qualified`, in response order; a missing or ill-typed piece throws `.invalidResponse`
///   ("decode error").
enum ODPResponseDecoder {
    static let operation = "Fetching qualified segments"

    static func qualifiedSegments(from body: Data) throws -> [String] {
        // Before the recursive decoder: a deeply nested body could overflow a thread's stack.
        guard !JSONDepth.exceeds(in: body) else {
            throw decodeError("the body nests deeper than \(JSONDepth.maximum) levels")
        }
        let json: JSONValue
        do {
            json = try JSONDecoder().decode(JSONValue.self, from: body)
        } catch {
            throw decodeError(body.isEmpty ? "the body is empty" : "the body is not JSON", underlying: error)
        }
        guard case .object(let root) = json else { throw decodeError("the top level is not an object") }
        if case .array(let errors)? = root["errors"], !errors.isEmpty {
            throw failure(for: errors.map(graphQLError))
        }
        guard case .object(let data)? = root["data"] else { throw decodeError("no data object") }
        switch data["customer"] {
        case .null?:
            return []
        case .object(let customer)?:
            guard case .object(let audiences)? = customer["audiences"], case .array(let edges)? = audiences["edges"]
            else { throw decodeError("missing data.customer.audiences.edges") }
            return try edges.compactMap(qualifiedName)
        default:
            throw decodeError("missing data.customer")
        }
    }

    /// The node's name when its state is `qualified`, `nil` for any other state.
    private static func qualifiedName(_ edge: JSONValue) throws -> String? {
        guard case .object(let edge) = edge, case .object(let node)? = edge["node"],
            case .string(let name)? = node["name"], case .string(let state)? = node["state"]
        else { throw decodeError("an edge has no node {name state}") }
        return state == "qualified" ? name : nil
    }

    private static func graphQLError(_ value: JSONValue) -> ODPGraphQLError {
        guard case .object(let object) = value else { return ODPGraphQLError(message: nil, code: nil, classification: nil) }
        var extensions: [String: JSONValue] = [:]
        if case .object(let found)? = object["extensions"] { extensions = found }
        return ODPGraphQLError(
            message: string(object["message"]), code: string(extensions["code"]),
            classification: string(extensions["classification"]))
    }

    /// The first invalid-identifier error wins; otherwise the first error's classification.
    private static func failure(for errors: [ODPGraphQLError]) -> SegmentsError {
        if let invalid = errors.first(where: \.isInvalidIdentifier) {
            return SegmentsError(
                .invalidIdentifier, "\(operation) failed: the user id is not registered or invalid", underlying: invalid)
        }
        let first = errors[0]
        return SegmentsError(.invalidResponse, "\(operation) failed: \(first.reason)", underlying: first)
    }

    private static func string(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    private static func decodeError(_ detail: String, underlying: (any Error)? = nil) -> SegmentsError {
        SegmentsError(.invalidResponse, "\(operation) failed: decode error (\(detail))", underlying: underlying)
    }
}
