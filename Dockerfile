# callproof's container image: the static CLI on a minimal base, for
# running suites in CI or as a Kubernetes Indexed Job
# (deploy/kubernetes/). Text-mode suites only: the audio dialects need
# flite and pocketsphinx, which this image leaves out.
#
#   docker build -t callproof:latest .
#   docker run --rm callproof:latest run --agent ws://agent:8080/ --out /results/run
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/callproof ./cmd/callproof

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/callproof /callproof
USER nonroot:nonroot
ENTRYPOINT ["/callproof"]
