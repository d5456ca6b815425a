// One shared dockerode client per process; docker-modem reads DOCKER_HOST / DOCKER_CERT_PATH.
import Dockerode from 'dockerode';

let client: Dockerode | undefined;

export function docker(): Dockerode {
  client ??= new Dockerode();
  return client;
}

/** Does the engine answer (a ping)? Never throws. */
export async function engineAnswers(): Promise<boolean> {
  return docker()
    .ping()
    .then(
      () => true,
      () => false,
    );
}

/** Tests or multi-host workers may point the module at another engine. */
export function setDockerClient(d: Dockerode | undefined): void {
  client = d;
}
