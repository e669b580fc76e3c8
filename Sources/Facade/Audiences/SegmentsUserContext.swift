import Foundation
import SegmentsDomain
import SegmentsData

/// One user of an ``AudienceSegmentsClient``: the audience segments the user qualifies for
/// (<doc:Behaviour#O1>) and the user's visitor segments (<doc:Behaviour#V-Visitor-segments>), as
/// Optimizely's `OptimizelyUserContext` and Convert's context spell them.
///
/// ```swift
/// let user = audiences.createUserContext(userId: "user123")
/// try await user.fetchQualifiedSegments(options: [.ignoreCache])
/// user.isQualifiedFor(segment: "seg-1")
/// user.setDefaultSegments(["country": "US"])
/// ```
///
/// Every member is usable from any thread.
public final class SegmentsUserContext: Sendable {
    private struct State: Sendable {
        /// The qualified segments as answered (their order kept), and the same names as a set,
        /// built once when they are stored (by a fetch or the setter): ``isQualifiedFor(segment:)``
        /// is one hash lookup however long the list, where a scan of the list (Optimizely's) grows
        /// with it.
        var qualified: Qualified?
        /// Numbers fetches in start order, so an older fetch that ends late never overwrites a newer one.
        var nextFetch = 0
        var lastApplied = 0
    }

    /// One stored answer: the list and its set.
    private struct Qualified: Sendable {
        let list: [String]
        let lookup: Set<String>

        init?(_ list: [String]?) {
            guard let list else { return nil }
            self.list = list
            self.lookup = Set(list)
        }
    }

    /// The user id.
    public let userId: String
    /// The id as the audience backend sees it: the field given to
    /// ``AudienceSegmentsClient/createUserContext(userId:identifierField:)``, else `vuid` for
    /// `vuid_…` ids and `fs_user_id` for the others.
    public let identifier: AudienceIdentifier
    let client: AudienceSegmentsClient
    private let state = Locked(State())

    init(userId: String, identifier: AudienceIdentifier, client: AudienceSegmentsClient) {
        self.userId = userId
        self.identifier = identifier
        self.client = client
    }

    /// The audience segments the user qualifies for, as of the last successful fetch; `nil` before
    /// the first one. Settable, to bypass fetching in tests or to use your own service.
    public var qualifiedSegments: [String]? {
        get { state.withLock { $0.qualified?.list } }
        set {
            let qualified = Qualified(newValue)  // the set is built before the lock is taken
            state.withLock { $0.qualified = qualified }
        }
    }

    /// Whether ``qualifiedSegments`` contains `segment` (`false` before any fetch): one lookup in
    /// a set built once per fetch, O(1) whatever the number of qualified segments.
    public func isQualifiedFor(segment: String) -> Bool {
        state.withLock { $0.qualified?.lookup.contains(segment) ?? false }
    }

    /// Fetches through the client's loader, updates ``qualifiedSegments``, then answers — on the
    /// loader's task or at once, never on the delivery queue, so the blocking form cannot deadlock it.
    ///
    /// Every answer, `.notEnabled` included, goes through ``apply(_:ticket:clearsOnFailure:)``, so
    /// `.clearOnFailure` holds for every failure.
    func load(_ options: [AudienceSegmentOption], completion: @escaping @Sendable (Result<[String], SegmentsError>) -> Void) {
        let ticket = state.withLock { state -> Int in
            state.nextFetch += 1
            return state.nextFetch
        }
        let clearsOnFailure = options.contains(.clearOnFailure)
        guard let loader = client.loader else {
            let result = Result<[String], SegmentsError>.failure(
                SegmentsError(.notEnabled, "Audience segments are not enabled: no ODP integration is configured"))
            apply(result, ticket: ticket, clearsOnFailure: clearsOnFailure)
            completion(result)
            return
        }
        loader.qualifiedSegments(for: identifier, candidates: client.candidateSegments, options: Set(options)) {
            [weak self] result in
            self?.apply(result, ticket: ticket, clearsOnFailure: clearsOnFailure)
            completion(result)
        }
    }

    /// Stores the answer of fetch number `ticket` unless a later fetch already stored one: a
    /// success always, a failure only with `.clearOnFailure` (as `nil`).
    private func apply(_ result: Result<[String], SegmentsError>, ticket: Int, clearsOnFailure: Bool) {
        // The set is built once per fetch, before the lock is taken.
        let qualified = Qualified(try? result.get())
        state.withLock { state in
            guard ticket > state.lastApplied else { return }
            switch result {
            case .success:
                state.qualified = qualified
                state.lastApplied = ticket
            case .failure:
                if clearsOnFailure {
                    state.qualified = nil
                    state.lastApplied = ticket
                }
            }
        }
    }
}
