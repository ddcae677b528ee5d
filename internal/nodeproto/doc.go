// Package nodeproto is the node protocol's adapter on the controller: it
// carries an agent's Connect stream (api/drover/v1 AgentMessage and
// ControllerMessage) to and from the controller's typed messages
// (internal/nodemsg), so that the controller speaks only model types. It
// owns the wire form of each message (how much of a job a launch, a step
// or a file fetch carries); it decides nothing.
package nodeproto
