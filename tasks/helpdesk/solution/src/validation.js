'use strict';
// Field validators. Each collects messages into `errors` ({field: message}).
const { validation } = require('./errors');

class Validator {
  constructor(body) {
    this.body = body || {};
    this.errors = {};
    this.out = {};
  }

  has(field) {
    return Object.prototype.hasOwnProperty.call(this.body, field);
  }

  string(field, { required = false, min = 0, max = Infinity, trim = true } = {}) {
    if (!this.has(field) || this.body[field] === undefined) {
      if (required) this.errors[field] = 'is required';
      return this;
    }
    let v = this.body[field];
    if (typeof v !== 'string') {
      this.errors[field] = 'must be a string';
      return this;
    }
    if (trim) v = v.trim();
    if (v.length < min) this.errors[field] = min <= 1 ? 'must not be empty' : `must be at least ${min} characters`;
    else if (v.length > max) this.errors[field] = `must be at most ${max} characters`;
    else this.out[field] = v;
    return this;
  }

  oneOf(field, values, { required = false } = {}) {
    if (!this.has(field) || this.body[field] === undefined) {
      if (required) this.errors[field] = 'is required';
      return this;
    }
    const v = this.body[field];
    if (!values.includes(v)) this.errors[field] = `must be one of: ${values.join(', ')}`;
    else this.out[field] = v;
    return this;
  }

  id(field, { required = false, nullable = false } = {}) {
    if (!this.has(field) || this.body[field] === undefined) {
      if (required) this.errors[field] = 'is required';
      return this;
    }
    const v = this.body[field];
    if (v === null && nullable) this.out[field] = null;
    else if (!Number.isInteger(v) || v <= 0) this.errors[field] = 'must be a positive integer id';
    else this.out[field] = v;
    return this;
  }

  boolean(field) {
    if (!this.has(field) || this.body[field] === undefined) return this;
    if (typeof this.body[field] !== 'boolean') this.errors[field] = 'must be a boolean';
    else this.out[field] = this.body[field];
    return this;
  }

  email(field) {
    this.string(field, { required: true, max: 254 });
    const v = this.out[field];
    if (v !== undefined) {
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v)) {
        this.errors[field] = 'must be a valid email address';
        delete this.out[field];
      } else this.out[field] = v.toLowerCase();
    }
    return this;
  }

  forbid(field, message) {
    if (this.has(field)) this.errors[field] = message;
    return this;
  }

  // Throws 422 when anything failed, else returns the cleaned values.
  result() {
    if (Object.keys(this.errors).length > 0) throw validation(this.errors);
    return this.out;
  }
}

const validate = (body) => new Validator(body);

// Positive integer path parameter; anything else cannot name an existing row.
function parseId(raw) {
  return /^[1-9][0-9]{0,9}$/.test(raw) && Number(raw) <= 2147483647 ? Number(raw) : null;
}

module.exports = { validate, parseId };
