import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsNetworking

/// Optimizely-style audience segments and visitor segments for your users: the entry point that
/// creates ``SegmentsUserContext``s (<doc:Behaviour#O-Audience-segments-from-ODP>,
/// <doc:Behaviour#V-Visitor-segments>).
///
/// It owns the candidate segments, one cache of qualified segments shared by all its user
/// contexts (100 users for 600 s), the ODP adapter and the visitor segments registry. Two clients
/// share nothing.
///
/// ```swift
/// let audiences = try AudienceSegmentsClient(
///     odp: ODPConfiguration(apiKey: "PUBLIC_KEY"), candidateSegments: ["seg-1", "seg-2"])
/// let user = audiences.createUserContext(userId: "user123")
/// try await user.fetchQualifiedSegments()
/// if user.isQualifiedFor(segment: "seg-1") { … }
/// ```
public final class AudienceSegmentsClient: Sendable {
    /// The audience names every fetch asks about.
    public let candidateSegments: [String]
    /// The reporting segments of every visitor, kept per visitor across restarts
    /// (<doc:Behaviour#V-Visitor-segments>).
    public let visitorSegments: VisitorSegmentsRegistry
    /// What the client was built from.
    public let options: Options
    /// `nil` when no audience backend is configured: fetches then fail with `.notEnabled`.
    let loader: QualifiedSegmentsLoader?

    /// A client over ODP GraphQL, or without an audience backend when `odp` is `nil`.
    ///
    /// - Parameters:
    ///   - odp: the ODP host and key; `nil` makes every fetch fail with `.notEnabled` (visitor
    ///     segments still work).
    ///   - candidateSegments: the audience names to ask about; none makes every fetch answer `[]`
    ///     without a request. Use ``ODPDatafile/candidateSegments(from:)`` to take them from a datafile.
    ///   - options: transport and middleware, clock, scheduler, logger, delivery queue, cache size
    ///     and time, and visitor storage.
    /// - Throws: ``SegmentsError`` `.invalidConfiguration` for a bad host or key (never a crash).
    public convenience init(odp: ODPConfiguration?, candidateSegments: [String], options: Options = Options()) throws {
        var fetcher: (any AudienceSegmentFetcher)?
        if let odp {
            try odp.validate()
            let transport = SegmentsMiddlewareTransport(transport: options.transport, middlewares: options.middlewares)
            fetcher = ODPAudienceSegmentFetcher(
                configuration: odp, transport: transport, clock: options.runtime.clock, logger: options.runtime.logger)
        }
        self.init(fetcher: fetcher, candidateSegments: candidateSegments, options: options)
    }

    /// A client configured by an Optimizely-style datafile: the candidates are every `qualified`
    /// segment of its `typedAudiences`, the ODP host and key come from its `odp` integration (none
    /// makes fetches fail with `.notEnabled`).
    ///
    /// - Throws: ``SegmentsError`` `.invalidResponse` when the datafile is not a JSON object,
    ///   `.invalidConfiguration` for a bad ODP integration.
    public convenience init(datafile: Data, options: Options = Options()) throws {
        try self.init(
            odp: ODPDatafile.configuration(from: datafile), candidateSegments: ODPDatafile.candidateSegments(from: datafile),
            options: options)
    }

    /// A client over any audience backend, e.g. your own service or a fake in tests; `nil` means
    /// none (fetches fail with `.notEnabled`).
    public init(fetcher: (any AudienceSegmentFetcher)?, candidateSegments: [String], options: Options = Options()) {
        self.candidateSegments = candidateSegments
        self.options = options
        loader = fetcher.map {
            QualifiedSegmentsLoader(
                fetcher: $0, scheduler: options.runtime.scheduler, clock: options.runtime.clock, logger: options.runtime.logger,
                cacheCapacity: options.cacheCapacity, cacheTimeout: options.cacheTimeout)
        }
        visitorSegments = options.visitorRegistry
    }

    /// Whether an audience backend is configured.
    public var isEnabled: Bool { loader != nil }

    /// A context for `userId`: ODP identifies it as `vuid` when it starts with `vuid_` (any case),
    /// otherwise as `fs_user_id`; its visitor segments are kept under `userId`.
    public func createUserContext(userId: String) -> SegmentsUserContext {
        SegmentsUserContext(userId: userId, identifier: AudienceIdentifier(userId: userId), client: self)
    }

    /// A context for `userId` that ODP always asks about as `identifierField`, whatever the id
    /// looks like: the key type Optimizely's segment manager takes as `userKey` (`.vuid` or
    /// `.fsUserId`; another field must be listed in `ODPConfiguration.additionalIdentifierFields`,
    /// or its fetches fail with `.invalidConfiguration`). Its visitor segments are kept under `userId`.
    ///
    /// ```swift
    /// let visitor = audiences.createUserContext(userId: "3d9e…", identifierField: .vuid)
    /// ```
    public func createUserContext(userId: String, identifierField: AudienceIdentifier.Field) -> SegmentsUserContext {
        SegmentsUserContext(userId: userId, identifier: AudienceIdentifier(field: identifierField, value: userId), client: self)
    }

    /// Empties the cache of qualified segments for every user, as the `.resetCache` option does.
    public func resetCache() {
        loader?.resetCache()
    }
}
