import path from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

// containerd's own gRPC API, spoken from the agent's process (issue 22, part 4): each call is a
// request on one HTTP/2 connection to the socket instead of a `ctr` process (a Go binary that
// starts, dials the same socket, makes the same call and exits: 10–25 ms each). Client:
// @grpc/grpc-js, the gRPC project's own Node implementation, with @grpc/proto-loader reading
// containerd's published .proto files (vendored under ./proto from
// github.com/containerd/containerd/api v1.8.0, Apache-2.0; the v1 services are wire-compatible
// with the containerd 1.6 that Debian ships and the GPU hosts run). The pull path uses it for
// everything but the two processes that carry containerd's own client logic: the pull (bytes
// at Go's speed) and `ctr run` (containerd's spec builder and default seccomp profile).

const PROTO_ROOT = fileURLToPath(new URL("./proto", import.meta.url));
const API = "github.com/containerd/containerd/api";
const PROTO_FILES = [
  "services/content/v1/content.proto",
  "services/images/v1/images.proto",
  "services/tasks/v1/tasks.proto",
  "services/containers/v1/containers.proto",
].map((f) => path.join(API, f));

export interface Descriptor {
  media_type: string;
  digest: string;
  size: number;
}

/** containerd's task states (types/task/task.proto), as the agent's TaskStatus names them. */
export type ApiTaskStatus = "UNKNOWN" | "CREATED" | "RUNNING" | "STOPPED" | "PAUSED" | "PAUSING";

/** A call containerd answered with an error: its gRPC code name and containerd's own words. */
export class ContainerdApiError extends Error {
  constructor(
    readonly method: string,
    readonly code: string,
    readonly details: string,
  ) {
    super(`containerd ${method}: ${details || code}`);
    this.name = "ContainerdApiError";
  }
  get notFound(): boolean {
    return this.code === "NOT_FOUND";
  }
}

type GrpcClient = grpc.Client & Record<string, unknown>;
type ServiceCtor = new (
  target: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => GrpcClient;

type Service = ServiceCtor & { service: grpc.ServiceDefinition };
let services: Record<string, Service> | undefined;
/** The service constructors, from the .proto files (parsed once per process, ~50 ms). */
export function containerdServices(): Record<string, Service> {
  if (services) return services;
  const definition = protoLoader.loadSync(PROTO_FILES, {
    includeDirs: [PROTO_ROOT],
    keepCase: true,
    // Sizes and offsets are int64: Number holds every size below 8 PiB exactly.
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const root = grpc.loadPackageDefinition(definition) as unknown as {
    containerd: { services: Record<string, { v1: Record<string, Service> }> };
  };
  const s = root.containerd.services;
  services = {
    Content: s.content!.v1.Content!,
    Images: s.images!.v1.Images!,
    Tasks: s.tasks!.v1.Tasks!,
    Containers: s.containers!.v1.Containers!,
  };
  return services;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** One containerd namespace over one socket. */
export class ContainerdApi {
  private readonly clients = new Map<string, GrpcClient>();
  private readonly target: string;

  constructor(
    /** containerd's gRPC socket (an absolute path). */
    address: string,
    readonly namespace: string,
    private readonly defaultTimeoutMs = 30_000,
  ) {
    this.target = `unix://${path.resolve(address)}`;
  }

  private client(service: string): GrpcClient {
    let client = this.clients.get(service);
    if (!client) {
      const Ctor = containerdServices()[service];
      if (!Ctor) throw new Error(`containerd API: no service ${service}`);
      // The clients share one connection: grpc-js pools subchannels by target and options.
      client = new Ctor(this.target, grpc.credentials.createInsecure(), {
        "grpc.max_receive_message_length": 64 * 1024 * 1024,
      });
      this.clients.set(service, client);
    }
    return client;
  }

  private metadata(): grpc.Metadata {
    const m = new grpc.Metadata();
    m.set("containerd-namespace", this.namespace);
    return m;
  }

  private callOptions(o: CallOptions): grpc.CallOptions {
    return { deadline: Date.now() + (o.timeoutMs ?? this.defaultTimeoutMs) };
  }

  /** One unary call: `Service.Method(request)`. */
  private unary<Res>(
    service: string,
    method: string,
    request: object,
    o: CallOptions = {},
  ): Promise<Res> {
    const client = this.client(service);
    const fn = client[method] as
      | ((
          req: object,
          md: grpc.Metadata,
          opts: grpc.CallOptions,
          cb: (err: grpc.ServiceError | null, res: Res) => void,
        ) => grpc.ClientUnaryCall)
      | undefined;
    if (!fn) throw new Error(`containerd API: no method ${service}.${method}`);
    return new Promise<Res>((resolve, reject) => {
      o.signal?.throwIfAborted();
      const call = fn.call(
        client,
        request,
        this.metadata(),
        this.callOptions(o),
        (err: grpc.ServiceError | null, res: Res) => {
          o.signal?.removeEventListener("abort", cancel);
          if (err) reject(apiError(`${service}.${method}`, err));
          else resolve(res);
        },
      );
      const cancel = () => call.cancel();
      o.signal?.addEventListener("abort", cancel, { once: true });
    });
  }

  /** A server-streaming call, its messages collected (cancelled with the caller's signal). */
  private async serverStream<Msg>(
    service: string,
    method: string,
    request: object,
    o: CallOptions,
  ): Promise<Msg[]> {
    const client = this.client(service);
    const fn = client[method] as (
      req: object,
      md: grpc.Metadata,
      opts: grpc.CallOptions,
    ) => grpc.ClientReadableStream<Msg>;
    const stream = fn.call(client, request, this.metadata(), this.callOptions(o));
    const cancel = () => stream.cancel();
    o.signal?.addEventListener("abort", cancel, { once: true });
    const messages: Msg[] = [];
    try {
      for await (const message of stream as AsyncIterable<Msg>) messages.push(message);
    } catch (error) {
      throw apiError(`${service}.${method}`, error as grpc.ServiceError);
    } finally {
      o.signal?.removeEventListener("abort", cancel);
    }
    return messages;
  }

  /** Content.Read as one buffer (manifests and configs: small). */
  async readContent(digest: string, o: CallOptions = {}): Promise<Buffer> {
    const chunks = await this.serverStream<{ data: Buffer }>(
      "Content",
      "Read",
      { digest, offset: 0, size: 0 },
      o,
    );
    return Buffer.concat(chunks.map((c) => c.data));
  }

  /** Every blob digest in the namespace's content store (Content.List). */
  async contentDigests(o: CallOptions = {}): Promise<Set<string>> {
    const pages = await this.serverStream<{ info: { digest: string }[] }>(
      "Content",
      "List",
      { filters: [] },
      o,
    );
    return new Set(pages.flatMap((page) => page.info.map((info) => info.digest)));
  }

  async image(name: string, o: CallOptions = {}): Promise<{ target: Descriptor } | undefined> {
    return this.unary<{ image: { target: Descriptor } }>("Images", "Get", { name }, o).then(
      (r) => r.image,
      orUndefinedIfNotFound,
    );
  }

  async container(
    id: string,
    o: CallOptions = {},
  ): Promise<
    { snapshotter: string; snapshot_key: string; labels: Record<string, string> } | undefined
  > {
    return this.unary<{
      container: { snapshotter: string; snapshot_key: string; labels: Record<string, string> };
    }>("Containers", "Get", { id }, o).then((r) => r.container, orUndefinedIfNotFound);
  }

  /** Tasks.Resume: thaws a paused task (the warm handover's one containerd call). */
  async resumeTask(containerId: string, o: CallOptions = {}): Promise<void> {
    await this.unary("Tasks", "Resume", { container_id: containerId }, o);
  }

  async taskStatus(containerId: string, o: CallOptions = {}): Promise<ApiTaskStatus | undefined> {
    return this.unary<{ process: { status: ApiTaskStatus } }>(
      "Tasks",
      "Get",
      { container_id: containerId },
      o,
    ).then((r) => r.process.status, orUndefinedIfNotFound);
  }

  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}

function orUndefinedIfNotFound(error: unknown): undefined {
  if (error instanceof ContainerdApiError && error.notFound) return undefined;
  throw error;
}

function apiError(method: string, err: grpc.ServiceError): Error {
  if (typeof err?.code !== "number") return err;
  const code = grpc.status[err.code] ?? String(err.code);
  return new ContainerdApiError(method, code, err.details ?? err.message);
}
