import { appendFile, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { containerdServices } from "../api/containerd-api.ts";

// The containerd API side of the fake tools (fake-tools.ts) for unit tests: a gRPC server on a
// unix socket that answers the calls the runtime makes over the API, from the fake tools' own
// state files (images.txt, content.txt, blobs/, containers/, tasks/), so that an image the fake
// `ctr images pull` stored is one Images.Get finds, and a task started over the API is one
// `ctr tasks ls` lists. Each call is logged to calls.log as `api <Service.Method> <key>` beside
// the tools' calls; `failWhen("api", match, message)` makes a call whose `Service.Method key`
// contains `match` fail with that message.

type Callback = (error: Partial<grpc.ServiceError> | null, value?: object) => void;
type Unary = (call: { request: unknown }, callback: Callback) => void;

export interface FakeContainerdApi {
  socket: string;
  close(): Promise<void>;
}

export async function startFakeContainerdApi(
  state: string,
  env: NodeJS.ProcessEnv,
): Promise<FakeContainerdApi> {
  const socket = path.join(state, "containerd-api.sock");
  const file = (...parts: string[]) => path.join(state, ...parts);
  const read = (p: string) => readFile(p, "utf8").catch(() => undefined);
  const pid = Number((env.FAKE_PIDS ?? "4242").split(" ")[0]);

  const log = async (method: string, key: string) => {
    await appendFile(file("calls.log"), `api\t${method}\t${key}\n`);
    for (const line of ((await read(file("fail"))) ?? "").split("\n")) {
      const [tool, match, message] = line.split("\t");
      if (tool === "api" && match && `${method} ${key}`.includes(match)) {
        throw Object.assign(new Error(message), { code: grpc.status.UNKNOWN, details: message });
      }
    }
  };
  const notFound = (details: string) =>
    Object.assign(new Error(details), { code: grpc.status.NOT_FOUND, details });
  const unary =
    <R>(method: string, key: (r: R) => string, answer: (r: R) => object | Promise<object>): Unary =>
    (call, callback) => {
      const request = call.request as R;
      void (async () => {
        await log(method, key(request));
        return answer(request);
      })().then(
        (value) => callback(null, value),
        (error: Partial<grpc.ServiceError>) => callback(error),
      );
    };
  const lines = async (name: string) =>
    ((await read(file(name))) ?? "").split("\n").filter(Boolean);
  const taskStatus = async (id: string) => (await read(file("tasks", id)))?.trim();

  const server = new grpc.Server();
  const services = containerdServices();
  server.addService(services.Content!.service, {
    List: (call: grpc.ServerWritableStream<object, object>) => {
      void (async () => {
        await log("Content.List", "");
        const digests = await lines("content.txt");
        call.write({ info: digests.map((digest) => ({ digest, size: 0, labels: {} })) });
        call.end();
      })();
    },
    Read: (call: grpc.ServerWritableStream<{ digest: string }, object>) => {
      const digest = call.request.digest;
      void (async () => {
        await log("Content.Read", digest);
        call.write({ offset: 0, data: await readFile(file("blobs", digest)) });
        call.end();
      })().catch(() => call.emit("error", notFound(`content digest ${digest}: not found`)));
    },
  });
  server.addService(services.Images!.service, {
    Get: unary(
      "Images.Get",
      (r: { name: string }) => r.name,
      async (r: { name: string }) => {
        const line = (await lines("images.txt")).find((l) => l.startsWith(`${r.name} `));
        if (!line) throw notFound(`image "${r.name}": not found`);
        const digest = line.split(" ")[1]!;
        return {
          image: {
            name: r.name,
            target: { media_type: "application/vnd.oci.image.manifest.v1+json", digest, size: 0 },
          },
        };
      },
    ),
  });
  server.addService(services.Containers!.service, {
    Get: unary(
      "Containers.Get",
      (r: { id: string }) => r.id,
      async (r: { id: string }) => {
        if ((await read(file("containers", r.id))) === undefined) {
          throw notFound(`container "${r.id}" in namespace "thaw": not found`);
        }
        return {
          container: { id: r.id, snapshotter: "overlayfs", snapshot_key: r.id, labels: {} },
        };
      },
    ),
  });
  server.addService(services.Tasks!.service, {
    Resume: unary(
      "Tasks.Resume",
      (r: { container_id: string }) => r.container_id,
      async (r: { container_id: string }) => {
        const status = await taskStatus(r.container_id);
        if (!status) throw notFound(`task ${r.container_id}: not found`);
        await writeFile(file("tasks", r.container_id), "RUNNING\n");
        return {};
      },
    ),
    Get: unary(
      "Tasks.Get",
      (r: { container_id: string }) => r.container_id,
      async (r: { container_id: string }) => {
        const status = await taskStatus(r.container_id);
        if (!status) throw notFound(`task ${r.container_id}: not found`);
        return { process: { container_id: r.container_id, pid, status } };
      },
    ),
  });

  await rm(socket, { force: true });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (error) =>
      error ? reject(error) : resolve(),
    ),
  );
  return {
    socket,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1_000).unref();
      }),
  };
}
