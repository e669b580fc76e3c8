import Foundation
import SegmentsDomain

/// Decoding of a 2xx GraphQL answer (<doc:Behaviour#ODP-audiences-query>): an answer whose shape is
/// wrong as a whole is a failed fetch, never "no segments"; one malformed audience node is dropped
/// and the rest kept.
///
/// - `errors` present and not empty: an invalid identifier (current or legacy form) throws
///   `.invalidIdentifier`; any other error throws `.invalidResponse` with an ``ODPGraphQLError``
///   carrying the classification as the underlying error and as the ``SegmentsError/reason``.
/// - `data.customer` is `null`: an unknown user, `[]`.
/// - otherwise `data.customer.audiences.edges` must be an array (else `.invalidResponse`, reason
///   `decode error`): the names of its nodes whose state is `qualified`, in response order. An
///   edge without a `node {name state}` of strings is dropped and counted in
///   ``Answer/droppedNodes`` (the adapter logs them as a warning), as Optimizely's SDK drops it and
///   as the Bloomreach decoder drops a segment without an id.
enum ODPResponseDecoder {
    static let operation = "Fetching qualified segments"

    /// What a well-shaped answer holds.
    struct Answer: Equatable {
        /// The qualified names, in response order.
        var qualified: [String]
        /// How many edges were dropped for lacking a `node {name state}` of strings.
        var droppedNodes: Int
    }

    /// The qualified names of `body`; dropped nodes are not reported.
    static func qualifiedSegments(from body: Data) throws -> [String] {
        try decode(body).qualified
    }

    /// The qualified names of `body` and how many malformed nodes were dropped.
    static func decode(_ body: Data) throws -> Answer {
        // Before any parsing: a deeply nested body could overflow a thread's stack, and a body in
        // UTF-16 or UTF-32 would hide its depth from the scan (Foundation's decoders convert it).
        if let refusal = JSONText.refusal(of: body) {
            throw decodeError("the body \(refusal)")
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
            return Answer(qualified: [], droppedNodes: 0)
        case .object(let customer)?:
            guard case .object(let audiences)? = customer["audiences"], case .array(let edges)? = audiences["edges"]
            else { throw decodeError("missing data.customer.audiences.edges") }
            var answer = Answer(qualified: [], droppedNodes: 0)
            for edge in edges {
                guard let (name, state) = node(of: edge) else {
                    answer.droppedNodes += 1
                    continue
                }
                if state == "qualified" { answer.qualified.append(name) }
            }
            return answer
        default:
            throw decodeError("missing data.customer")
        }
    }

    /// The node's name and state, or `nil` when the edge has no `node {name state}` of strings.
    private static func node(of edge: JSONValue) -> (name: String, state: String)? {
        guard case .object(let edge) = edge, case .object(let node)? = edge["node"],
            case .string(let name)? = node["name"], case .string(let state)? = node["state"]
        else { return nil }
        return (name, state)
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
                .invalidIdentifier, "\(operation) failed: the user id is not registered or invalid", underlying: invalid,
                reason: .invalidIdentifier)
        }
        let first = errors[0]
        return SegmentsError(
            .invalidResponse, "\(operation) failed: \(first.reason)", underlying: first,
            reason: SegmentsError.Reason(rawValue: first.reason))
    }

    private static func string(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    private static func decodeError(_ detail: String, underlying: (any Error)? = nil) -> SegmentsError {
        SegmentsError(
            .invalidResponse, "\(operation) failed: decode error (\(detail))", underlying: underlying, reason: .decodeError)
    }
}
