import Foundation
import SegmentsData
import SegmentsNetworking
import SegmentsPersistence

/// The ports of one configured integration, built and validated before anything changes.
struct ConfiguredParts {
    let repository: any SegmentRepository
    let uploader: any EventUploader
    let customer: any CustomerStore
    let baseline: any SegmentBaselineStore
    let events: any EventQueueStore

    init(_ configuration: SegmentsClient.Configuration, options: SegmentsClient.Options) throws {
        try options.validate()
        let integrationId: String
        switch configuration.backend {
        case .bloomreach(let bloomreach):
            try bloomreach.validate()
            let transport = SegmentsMiddlewareTransport(transport: options.transport, middlewares: options.middlewares)
            repository = BloomreachSegmentRepository(
                configuration: bloomreach, transport: transport, scheduler: options.scheduler, clock: options.clock,
                logger: options.logger)
            uploader = BloomreachEventUploader(
                configuration: bloomreach, transport: transport, scheduler: options.scheduler, clock: options.clock,
                logger: options.logger)
            switch bloomreach.integration {
            case .project(let token): integrationId = "project-\(token)"
            case .stream(let id): integrationId = "stream-\(id)"
            }
        case .odp(let odp, let candidates, let category):
            try odp.validate()
            let transport = SegmentsMiddlewareTransport(transport: options.transport, middlewares: options.middlewares)
            repository = ODPAudienceRepository(
                configuration: odp, transport: transport, clock: options.clock, candidates: candidates,
                category: category)
            uploader = DiscardingEventUploader(logger: options.logger)
            integrationId = "odp-\(odp.apiKey)"
        case .custom(let id, let customRepository, let customUploader):
            guard !id.isEmpty else { throw SegmentsError(.invalidConfiguration, "The integration id is empty") }
            repository = customRepository
            uploader = customUploader
            integrationId = "custom-\(id)"
        }
        if case .periodic(let seconds) = configuration.flushingMode, !(seconds > 0) {
            throw SegmentsError(.invalidConfiguration, "The periodic flushing interval must be positive")
        }

        switch options.storage {
        case .directory(let directory):
            let folder = directory ?? StorageLocation.defaultDirectory(integrationId: integrationId)
            let stores = FileStoreRegistry.stores(in: folder, logger: options.logger)
            customer = stores.customer
            baseline = stores.baseline
            events = stores.events
        case .inMemory:
            customer = InMemoryCustomerStore()
            baseline = InMemorySegmentBaselineStore()
            events = InMemoryEventQueueStore()
        case .custom(let customStore, let baselineStore, let eventStore):
            customer = customStore
            baseline = baselineStore
            events = eventStore
        }
    }
}
